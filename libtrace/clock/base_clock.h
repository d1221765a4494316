// The base clock every timestamp is read from: local nanoseconds as a 64-bit integer.
// Hot path: inline, no allocation. The clock kind is chosen once (HTRACE_CLOCK) before tracing;
// now() then costs one well-predicted branch on a global that never changes afterwards.
#pragma once

#include "clock/global_time_map.h"

#include <cstddef>
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

/// Local time in ns on the selected base clock (CLOCK_MONOTONIC until install_base_clock(); the
/// first stamp installs HTRACE_CLOCK's, monotonic_raw by default).
inline Nanoseconds now() {
  if (__builtin_expect(detail::g_kind == BaseClockKind::MonotonicRaw, 1))
    return detail::read_posix(CLOCK_MONOTONIC_RAW);
  if (detail::g_kind == BaseClockKind::Tsc)
    return detail::tsc_to_ns(detail::read_tsc(), detail::g_tsc);
  return detail::read_posix(CLOCK_MONOTONIC);
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

// ---- Event timestamps ("stamps") ----
// Events are stamped with stamp(), not now(): with a POSIX base clock (CLOCK_MONOTONIC_RAW, the
// default, or CLOCK_MONOTONIC) and an invariant TSC, a stamp is the raw TSC (one rdtsc, ~10 ns,
// instead of a ~25 ns clock_gettime). The recorder turns stamps into base-clock ns when it writes
// them (StampConverter): the TSC is interpolated between anchors, (TSC, base clock) pairs read
// side by side at the first stamp and then at most every 100 ms (more often early in the run), so
// timestamps follow the node's base clock exactly at every anchor: its time-namespace offset, its
// rate (NTP slewing CLOCK_MONOTONIC, a clock-rate shim) and anything else that moves it, with only
// the rate change between two anchors as error. Otherwise (HTRACE_CLOCK=tsc,
// HTRACE_TSC_STAMPS=0, no invariant TSC) a stamp is now() and the conversion is the identity.
using Stamp = std::int64_t;

enum class StampKind : std::uint8_t { Undecided, Tsc, BaseClock };

namespace detail {
extern StampKind g_stamp_kind;
Stamp stamp_slow();
} // namespace detail

/// The hot path's timestamp (see above). Never 0.
inline Stamp stamp() {
  if (__builtin_expect(detail::g_stamp_kind == StampKind::Tsc, 1))
    return static_cast<Stamp>(detail::read_tsc());
  return detail::stamp_slow();
}

/// Chooses the stamp source once per process (before the first stamp; later calls do nothing):
/// the TSC when `use_tsc`, the base clock is CLOCK_MONOTONIC and the TSC is invariant.
void choose_stamp_source(bool use_tsc);
StampKind stamp_kind();

/// The stamp `ago_ns` before stamp `s` (durations measured on another clock, e.g. MPI_Init's).
Stamp stamp_before(Stamp s, Nanoseconds ago_ns);

/// Records an anchor if the last one is old enough (cheap otherwise; never blocks: a concurrent
/// caller makes it skip). The recorder calls it before converting a buffer.
void maybe_anchor();
/// The same, deciding on `recent`, a stamp taken moments ago (the last event's), instead of
/// reading the TSC: a few integer operations when no anchor is due.
void maybe_anchor(Stamp recent);

/// Converts the stamps of one buffer (any order, mostly increasing) into global ns: each stamp
/// becomes base-clock ns (linear between anchors, the last segment's rate beyond them; the
/// identity for base-clock stamps), then goes through `map`. Both maps are linear per segment, so
/// they are fused into one multiply per stamp. Uses a snapshot of the anchors taken at
/// construction; lock-free and allocation-free (usable from a signal handler).
class StampConverter {
public:
  explicit StampConverter(const GlobalTimeMap& map = {});
  /// False once anchors were added after construction (a new converter then interpolates where
  /// this one extrapolates), and without anchors (a new one re-bases its single segment).
  bool current() const;
  /// Global ns of stamp `s` (base-clock ns when the map is the identity).
  Nanoseconds operator()(Stamp s) {
    if (__builtin_expect(s < seg_begin_ || s >= seg_end_, 0)) select(s);
    // Fixed point, rounded to the nearest ns: integer multiplies pipeline across the events of
    // a buffer, where int -> double -> int conversions would be most of a conversion's time.
    const __int128 x = static_cast<__int128>(s - seg_stamp_) * seg_rate_ + kRateHalf;
    return seg_ns_ + static_cast<std::int64_t>(x >> kRateBits);
  }

private:
  void select(Stamp s);
  static std::int64_t fixed_rate(double rate);
  GlobalTimeMap map_;
  std::size_t count_ = 0;             ///< anchors in the snapshot (0: base-clock stamps)
  std::size_t seen_ = 0;              ///< anchors published at construction
  Stamp seg_begin_ = 0, seg_end_ = 0; ///< empty until the first select()
  Stamp seg_stamp_ = 0;
  /// Fractional bits of the rate: 2^-40 relative error is 0.001 ns over a 1 s segment, and
  /// 2^50 stamp units (days of TSC ticks) times a rate below 2^24 stay far inside 127 bits.
  static constexpr int kRateBits = 40;
  static constexpr __int128 kRateHalf = __int128{1} << (kRateBits - 1);
  Nanoseconds seg_ns_ = 0;                               ///< global ns at seg_stamp_
  std::int64_t seg_rate_ = std::int64_t{1} << kRateBits; ///< global ns per stamp unit, fixed point
};

} // namespace htrace::clock
