// Running a synchronization on any transport, and measuring how good the result is: the offset of
// chosen ranks' global clocks to rank 0's global clock (the inner loop of Algorithm 6). The tracer
// stores these residuals in the archive; htrace-clockcheck prints them.
#pragma once

#include "clock/algorithms.h"
#include "clock/offset.h"

#include <cstdint>
#include <vector>

namespace htrace::clock {

struct SyncRun {
  GlobalClock clock{TimeSource{}};
  SyncStats stats;
  std::int64_t duration_ns = 0; ///< on this rank, from the entry barrier to the end
};

/// Synchronizes every rank of `t` (rank 0 is the reference) starting from `base`. Collective.
SyncRun synchronize_on(Transport& t, const SyncConfig& config, TimeSource base,
                       SyncContext ctx = {});

/// Selects the base clock `name` on every rank of `world` (all or none: false with `error`). For
/// the TSC, each node's leader calibrates and its ranks share that calibration, so they read one
/// clock and ClockPropSync applies (only then is the node split made). Collective.
bool setup_base_clock(Transport& world, const std::string& name, std::string& error);

/// Rank 0 measures, one rank after the other, the offset of each rank in `ranks` (never 0) on
/// `clock` with SKaMPI-Offset. Each measured rank gets its own result in `mine`; rank 0 gets all
/// results in rank order of `ranks`. Other ranks return an empty vector. Collective over `ranks`+0.
std::vector<OffsetMeasurement> measure_offsets_to_root(Transport& t, const GlobalClock& clock,
                                                       const std::vector<int>& ranks, int pingpongs,
                                                       OffsetMeasurement* mine);

/// Algorithm 6 for one configuration: synchronize, measure the chosen ranks' offsets right after
/// the sync and again after `wait_ns` (all ranks sleep, then meet in a barrier).
struct AccuracyCheck {
  SyncRun run;
  std::int64_t max_duration_ns = 0;          ///< slowest rank's sync duration
  std::vector<OffsetMeasurement> after_sync; ///< on rank 0: per measured rank
  std::vector<OffsetMeasurement> after_wait;
  OffsetMeasurement mine_after_sync, mine_after_wait; ///< this rank's own (zeros on rank 0)
  std::int64_t local_after_sync = 0,
               local_after_wait = 0; ///< base clock at this rank's measurement
};
AccuracyCheck check_accuracy(Transport& t, const SyncConfig& config, TimeSource base,
                             const std::vector<int>& ranks, std::int64_t wait_ns, int pingpongs);

} // namespace htrace::clock
