// Values of logical messages that cross correction ranks, moved in bulk: every rank posts what
// its locations produced, then one collective exchange delivers everything at once. What a value
// means (an input time, a raised forward value, a receiver's time) is the round's, not the value's.
#ifndef HTRACE_CORRECT_EXCHANGE_H
#define HTRACE_CORRECT_EXCHANGE_H

#include "correct/model.h"
#include "correct/rank_group.h"
#include "format/error.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace htrace::correct {

// Consecutive messages of one p2p stream: values[i] is message number first + i's.
struct P2PRun {
  uint32_t src = 0, dst = 0; // process indices
  uint64_t comm_tag = 0, first = 0;
  const int64_t* values = nullptr;
  size_t count = 0;
};

// One member's value of a collective instance.
struct CollectiveValue {
  uint32_t comm = 0;
  uint32_t process = 0; // the contributing (forward) or receiving (backward) process
  uint64_t sequence = 0;
  int64_t value = 0, input = 0;
};

class Exchange {
public:
  // `ranks` must outlive the exchange.
  explicit Exchange(RankGroup& ranks);
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // A p2p message's value for `rank`. Messages of one stream posted one after another in
  // sequence order share one header (8 bytes each then); a message posted after another
  // stream's starts a run of its own (40 bytes).
  void post(int rank, const P2PStream& stream, uint64_t sequence, int64_t value);
  void post(int rank, const CollectiveValue& v);
  // Room for `values` more p2p values in `runs` runs to `rank`.
  void reserve(int rank, size_t values, size_t runs);

  // Moves everything posted on every rank. Returns the number of values moved on all ranks
  // together (0: nothing was posted anywhere).
  uint64_t run();
  // Calls on_p2p(const P2PRun&) and on_collective(const CollectiveValue&) for what the last run
  // brought here.
  template <class OnP2P, class OnCollective>
  void for_each_received(OnP2P&& on_p2p, OnCollective&& on_collective) const;

private:
  // Records are 8-byte words. The first word is a record's tag (low bit) and, for a p2p run, its
  // value count (the other bits). A p2p run: tag, src << 32 | dst, comm_tag, first sequence,
  // then the values. A collective value: tag, comm << 32 | process, sequence, value, input.
  static constexpr uint64_t kP2PRun = 0, kCollective = 1;
  static constexpr size_t kRunHeader = 4, kCollectiveWords = 5;
  static constexpr size_t kNoRun = SIZE_MAX;

  struct Outbox {
    std::vector<uint64_t> words;
    size_t run = kNoRun; // the open p2p run's first word
    const P2PStream* stream = nullptr;
    uint64_t next_sequence = 0; // continues the open run
  };

  RankGroup& ranks_;
  int size_ = 1;
  uint64_t posted_ = 0; // values, since the last run
  // Kept from run to run: later rounds reuse the memory the first one touched.
  std::vector<Outbox> out_;
  std::vector<WordSpan> spans_; // the outboxes' words, as the group sends them
  EventArray<uint64_t> in_;     // (not zero-filled: every word is received)
};

template <class OnP2P, class OnCollective>
void Exchange::for_each_received(OnP2P&& on_p2p, OnCollective&& on_collective) const {
  const uint64_t* w = in_.data();
  const uint64_t* const end = w + in_.size();
  while (w < end) {
    if ((w[0] & 1) == kP2PRun) {
      P2PRun run;
      run.count = static_cast<size_t>(w[0] >> 1);
      run.src = static_cast<uint32_t>(w[1] >> 32), run.dst = static_cast<uint32_t>(w[1]);
      run.comm_tag = w[2], run.first = w[3];
      run.values = reinterpret_cast<const int64_t*>(w + kRunHeader);
      on_p2p(run);
      w += kRunHeader + run.count;
    } else {
      CollectiveValue v;
      v.comm = static_cast<uint32_t>(w[1] >> 32), v.process = static_cast<uint32_t>(w[1]);
      v.sequence = w[2];
      v.value = static_cast<int64_t>(w[3]), v.input = static_cast<int64_t>(w[4]);
      on_collective(v);
      w += kCollectiveWords;
    }
  }
}

// Every rank throws the message of the lowest rank that has one, preferring priority 0 messages
// (a point-to-point wait explains more than the collectives blocked behind it), as an Error of
// that rank's kind marked agreed. Ranks without a message pass "". Priorities are 0 or 1.
[[noreturn]] void fail_together(RankGroup& ranks, std::string message, int priority = 0,
                                ErrorKind kind = ErrorKind::Input);
// Collective: throws like fail_together if any rank passes a non-empty message.
void check_together(RankGroup& ranks, const std::string& message, int priority = 0,
                    ErrorKind kind = ErrorKind::Input);

// Runs fn on every rank; if it throws anywhere, every rank throws the lowest failing rank's
// message, as an agreed Error of its kind (`kind` for exceptions that name none).
std::string agree(RankGroup& ranks, const std::function<std::string()>& fn,
                  ErrorKind kind = ErrorKind::Input);
template <class F>
auto agree_value(RankGroup& ranks, F fn, ErrorKind kind = ErrorKind::Input) -> decltype(fn()) {
  decltype(fn()) value{};
  agree(
      ranks,
      [&] {
        value = fn();
        return std::string();
      },
      kind);
  return value;
}

// Collective clean-up (closing an OTF2 reader or archive) may run unless a rank-local exception
// is unwinding: the other ranks would not join it.
bool may_clean_up_together();

// True once an error has been raised on every rank together: clean-up that calls collectives
// (closing an OTF2 archive) may run while it unwinds. A rank-local exception must skip it.
bool unwinding_together();

} // namespace htrace::correct
#endif
