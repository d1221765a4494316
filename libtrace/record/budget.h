// HTRACE_BUDGET (not a public header): the bytes of OTF2 event data one rank may write, all its
// locations together. Counted where a thread's buffer is converted (location_writer.cpp), never
// per event. The conversion that reaches the limit stops recording on the rank through the
// producers' hooks (record::add_budget_hook: the MPI wrappers, the OMPT tool); what the buffers
// still hold, and the rest of the calls in progress, is written, then finalize ends every
// location with a MeasurementOnOff (off) record at the cut.
#pragma once

#include "clock/base_clock.h"

#include <atomic>
#include <cstdint>

namespace htrace::record {

struct State;

class TraceBudget {
public:
  /// 0: no limit. Set by start(), before any event is written.
  void set_limit(std::uint64_t bytes) { limit_ = bytes; }
  std::uint64_t limit() const { return limit_; }

  /// Counts `bytes` more event data of one location. True for the one call that reaches the limit,
  /// when `may_reach` (the final writes of finalize and the emergency flush count, but stop
  /// nothing: recording is over then).
  bool add(std::uint64_t bytes, bool may_reach) noexcept {
    const std::uint64_t total = used_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    return may_reach && limit_ != 0 && total >= limit_ && !reached_.exchange(true);
  }
  std::uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  bool reached() const { return reached_.load(std::memory_order_acquire); }
  /// The stamp of the newest event converted when the limit was reached; 0 before.
  clock::Stamp cut() const { return cut_.load(std::memory_order_acquire); }
  void set_cut(clock::Stamp stamp) { cut_.store(stamp, std::memory_order_release); }

private:
  std::uint64_t limit_ = 0;
  std::atomic<std::uint64_t> used_{0};
  std::atomic<bool> reached_{false};
  std::atomic<clock::Stamp> cut_{0};
};

/// After TraceBudget::add() returned true, inside that conversion: keeps the cut, logs the one
/// line of this rank and runs the producers' hooks. Never on a signal's path (final writes do not
/// reach the limit).
void reach_budget(State& s, clock::Stamp cut);

} // namespace htrace::record
