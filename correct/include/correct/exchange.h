// Values of logical messages that cross correction ranks, moved in bulk: every rank posts what
// its locations produced, then one collective exchange delivers everything at once.
#ifndef HTRACE_CORRECT_EXCHANGE_H
#define HTRACE_CORRECT_EXCHANGE_H

#include "correct/model.h"

#include <mpi.h>
#include <string>
#include <vector>

namespace htrace::correct {

enum class RemoteUse : uint8_t {
  Input,    // a contribution's input time, the first guess of its forward value
  Update,   // a contribution raised by a later forward round
  Backward, // a receiver's time, for the senders' upper bounds
};

// One value for a P2P or Collective channel, packed into 40 bytes (there is one per message
// crossing correction ranks, several times).
class RemoteValue {
public:
  RemoteValue() = default;
  // `process`: the contributing (forward) or receiving (backward) process.
  RemoteValue(const ChannelKey& key, int64_t value, int64_t input, uint32_t process, RemoteUse use)
      : value(value), input(input), c_(key.type == ChannelType::P2P ? key.c : key.b),
        a_(static_cast<uint32_t>(key.a)),
        b_(static_cast<uint32_t>(key.type == ChannelType::P2P ? key.b : process)),
        d_(static_cast<uint32_t>(key.d)), type_(key.type), use_(use) {}

  ChannelKey key() const {
    if (type_ == ChannelType::P2P) return {type_, a_, b_, c_, d_};
    return {type_, a_, c_, 0, 0};
  }
  // P2P: the sender (forward) or the receiver (backward) of the message.
  uint32_t process() const {
    return type_ != ChannelType::P2P ? b_ : use_ == RemoteUse::Backward ? b_ : a_;
  }
  RemoteUse use() const { return use_; }

  int64_t value = 0, input = 0;

private:
  // P2P: a = source, b = destination process, c = comm<<32|tag, d = sequence.
  // Collective: a = comm, b = the process, c = sequence.
  uint64_t c_ = 0;
  uint32_t a_ = 0, b_ = 0, d_ = 0;
  ChannelType type_ = ChannelType::P2P;
  RemoteUse use_ = RemoteUse::Input;
};
static_assert(sizeof(RemoteValue) == 40, "RemoteValue: keep it small, millions are exchanged");

class Exchange {
public:
  explicit Exchange(MPI_Comm comm);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  void post(int rank, const RemoteValue& v) { out_[static_cast<size_t>(rank)].push_back(v); }
  // Room for n more values to `rank`.
  void reserve(int rank, size_t n) {
    std::vector<RemoteValue>& q = out_[static_cast<size_t>(rank)];
    q.reserve(q.size() + n);
  }
  // Moves everything posted on every rank; returns what arrived here (valid until the next run),
  // and in `moved` the number of values moved on all ranks together (0: nothing was posted
  // anywhere).
  const EventArray<RemoteValue>& run(uint64_t& moved);

private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  // Kept from run to run: later rounds reuse the memory the first one touched.
  std::vector<std::vector<RemoteValue>> out_;
  EventArray<RemoteValue> in_;
  MPI_Datatype value_type_ = MPI_DATATYPE_NULL; // one RemoteValue as bytes
};

// Every rank throws the message of the lowest rank that has one, preferring priority 0 messages
// (a point-to-point wait explains more than the collectives blocked behind it). Ranks without a
// message pass "".
[[noreturn]] void fail_together(MPI_Comm comm, std::string message, int priority = 0);
// Collective: throws like fail_together if any rank passes a non-empty message.
void check_together(MPI_Comm comm, const std::string& message, int priority = 0);

} // namespace htrace::correct
#endif
