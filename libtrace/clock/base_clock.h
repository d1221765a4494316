// The base clock every timestamp is read from: local nanoseconds as a 64-bit integer.
// Hot path: inline, no allocation. The clock kind is chosen once (HTRACE_CLOCK) before tracing.
#pragma once

#include <cstdint>
#include <ctime>

namespace htrace::clock {

using Nanoseconds = std::int64_t;

/// Local time in ns on CLOCK_MONOTONIC. (Owner of clock/ extends this with monotonic_raw and a
/// calibrated invariant TSC behind the same signature.)
inline Nanoseconds now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanoseconds>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

} // namespace htrace::clock
