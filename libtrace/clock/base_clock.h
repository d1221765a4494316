// The base clock every timestamp is read from: local nanoseconds as a 64-bit integer.
// Hot path: inline, no allocation. The clock kind is chosen once (HTRACE_CLOCK) before tracing;
// now() then costs one well-predicted branch on a global that never changes afterwards.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HTRACE_HAVE_TSC 1
#else
#define HTRACE_HAVE_TSC 0
#endif

namespace htrace::clock {

using Nanoseconds = std::int64_t;

enum class BaseClockKind : std::uint8_t { Monotonic, MonotonicRaw, Tsc };

/// ns = ns_at_origin + ((tsc - tsc_at_origin) * mult) >> shift. Integer only: a TSC timestamp is
/// converted with one multiply and one shift, and every rank of a node can share the same numbers.
struct TscCalibration {
  std::uint64_t tsc_at_origin = 0;
  std::int64_t ns_at_origin = 0;
  std::uint64_t mult = 0;
  std::uint32_t shift = 0;
  double ticks_per_ns() const {
    return static_cast<double>(1ull << shift) / static_cast<double>(mult);
  }
};

namespace detail {
extern BaseClockKind g_kind;
extern TscCalibration g_tsc;

inline Nanoseconds read_posix(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<Nanoseconds>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
inline std::uint64_t read_tsc() {
#if HTRACE_HAVE_TSC
  return __rdtsc();
#else
  return 0;
#endif
}
inline Nanoseconds tsc_to_ns(std::uint64_t tsc, const TscCalibration& c) {
  const std::int64_t ticks = static_cast<std::int64_t>(tsc - c.tsc_at_origin);
  // 128-bit product: no overflow for years of ticks.
  const __int128 scaled = static_cast<__int128>(ticks) * static_cast<__int128>(c.mult);
  return c.ns_at_origin + static_cast<Nanoseconds>(scaled >> c.shift);
}
} // namespace detail

/// Local time in ns on the selected base clock (CLOCK_MONOTONIC until select_base_clock()).
inline Nanoseconds now() {
  if (__builtin_expect(detail::g_kind == BaseClockKind::Monotonic, 1))
    return detail::read_posix(CLOCK_MONOTONIC);
  if (detail::g_kind == BaseClockKind::Tsc)
    return detail::tsc_to_ns(detail::read_tsc(), detail::g_tsc);
  return detail::read_posix(CLOCK_MONOTONIC_RAW);
}

/// A POSIX clock in ns, independent of the selected base clock (wall-clock dates, and durations
/// that must not change clock when the base clock is switched).
inline Nanoseconds posix_now(clockid_t id) {
  return detail::read_posix(id);
}

/// Parses a base clock name (monotonic | monotonic_raw | tsc); false and `error` on anything else.
bool parse_base_clock(const std::string& name, BaseClockKind& kind, std::string& error);
const char* base_clock_name(BaseClockKind kind);
BaseClockKind current_base_clock();

/// True when /proc/cpuinfo (or `cpuinfo_text`) lists both constant_tsc and nonstop_tsc: only then
/// does the TSC tick at a constant rate across frequency changes and idle states.
bool tsc_is_invariant(std::string& why_not);
bool tsc_flags_are_invariant(const std::string& cpuinfo_text);

/// Measures the TSC rate against CLOCK_MONOTONIC_RAW for about `duration_ns`.
TscCalibration calibrate_tsc(Nanoseconds duration_ns);

/// Switches now() to `kind` (for Tsc with `calibration`). Call before any event is recorded.
void install_base_clock(BaseClockKind kind, const TscCalibration& calibration = {});

} // namespace htrace::clock
