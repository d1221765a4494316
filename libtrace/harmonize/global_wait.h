// Waiting for an instant of the global clock, shared by MPIX_Harmonize and htrace-bench.
#pragma once

#include "clock/global_time_map.h"

#include <cstdint>

namespace htrace::harmonize {

/// Blocks until `deadline` (global ns) has passed on this rank's view of the global clock. Sleeps
/// (absolute CLOCK_MONOTONIC wake-up) until `spin_ns` before the deadline, then spins: sleeping
/// frees the core for other ranks of an oversubscribed node, spinning the last stretch avoids the
/// wake-up latency. Returns false without waiting if the deadline had already passed.
bool wait_until_global(const clock::GlobalTimeMap& map, std::int64_t deadline,
                       std::int64_t spin_ns);

} // namespace htrace::harmonize
