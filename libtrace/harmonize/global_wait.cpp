#include "harmonize/global_wait.h"

#include "clock/base_clock.h"

#include <cerrno>
#include <ctime>
#include <sched.h>

namespace htrace::harmonize {

bool wait_until_global(const clock::GlobalTimeMap& map, std::int64_t deadline,
                       std::int64_t spin_ns) {
  const std::int64_t remaining = deadline - map.to_global(clock::now());
  if (remaining < 0) return false;
  if (remaining > spin_ns) {
    // Relative sleep: the base clock need not be CLOCK_MONOTONIC (HTRACE_CLOCK=tsc, monotonic_raw).
    const std::int64_t nap = remaining - spin_ns;
    timespec ts{static_cast<time_t>(nap / 1000000000), static_cast<long>(nap % 1000000000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
  }
  // Yielding while spinning lets the other ranks of an oversubscribed node, woken for the same
  // deadline, reach their own clock check; on a dedicated core sched_yield returns at once.
  while (map.to_global(clock::now()) < deadline)
    sched_yield();
  return true;
}

} // namespace htrace::harmonize
