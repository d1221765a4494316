// Values of logical messages that cross correction ranks, moved in bulk: every rank posts what
// its locations produced, then one collective exchange delivers everything at once.
#ifndef HTRACE_CORRECT_EXCHANGE_H
#define HTRACE_CORRECT_EXCHANGE_H

#include "correct/model.h"

#include <mpi.h>
#include <string>
#include <vector>

namespace htrace::correct {

enum class RemoteUse : uint32_t {
  Input,    // a contribution's input time, the first guess of its forward value
  Update,   // a contribution raised by a later forward round
  Backward, // a receiver's time, for the senders' upper bounds
};

struct RemoteValue {
  ChannelKey key; // P2P or Collective channel
  int64_t value, input;
  uint32_t process; // the contributing (forward) or receiving (backward) process
  RemoteUse use;
};

class Exchange {
public:
  explicit Exchange(MPI_Comm comm);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  void post(int rank, const RemoteValue& v) { out_[static_cast<size_t>(rank)].push_back(v); }
  // Moves everything posted on every rank; returns what arrived here, and in `moved` the number
  // of values moved on all ranks together (0: nothing was posted anywhere).
  EventArray<RemoteValue> run(uint64_t& moved);

private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<std::vector<RemoteValue>> out_;
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
