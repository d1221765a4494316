// Running a synchronization on any transport, and measuring how good the result is: the offset of
// chosen ranks' global clocks to rank 0's global clock (the inner loop of Algorithm 6). The tracer
// stores these residuals in the archive; htrace-clockcheck prints them.
#pragma once

#include <cstdint>
#include <vector>

#include "clock/algorithms.h"
#include "clock/offset.h"

namespace htrace::clock {

struct SyncRun {
  GlobalClock clock;
  SyncStats stats;
  std::int64_t duration_ns = 0; ///< on this rank, from the entry barrier to the end
};

/// Synchronizes every rank of `t` (rank 0 is the reference) starting from `base`. Collective.
SyncRun synchronize_on(Transport& t, const SyncConfig& config, TimeSource base, SyncContext ctx = {});

/// Rank 0 measures, one rank after the other, the offset of each rank in `ranks` (never 0) on
/// `clock` with SKaMPI-Offset. Each measured rank gets its own result in `mine`; rank 0 gets all
/// results in rank order of `ranks`. Other ranks return an empty vector. Collective over `ranks`+0.
std::vector<OffsetMeasurement> measure_offsets_to_root(Transport& t, const GlobalClock& clock,
                                                       const std::vector<int>& ranks, int pingpongs,
                                                       OffsetMeasurement* mine);

} // namespace htrace::clock
