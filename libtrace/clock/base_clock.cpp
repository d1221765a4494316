#include "clock/base_clock.h"

#include "common/options.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace htrace::clock {
namespace detail {
BaseClockKind g_kind = BaseClockKind::Monotonic;
TscCalibration g_tsc;
} // namespace detail

bool parse_base_clock(const std::string& name, BaseClockKind& kind, std::string& error) {
  if (name == "monotonic")
    kind = BaseClockKind::Monotonic;
  else if (name == "monotonic_raw")
    kind = BaseClockKind::MonotonicRaw;
  else if (name == "tsc")
    kind = BaseClockKind::Tsc;
  else {
    error = "unknown base clock '" + name + "' (expected monotonic, monotonic_raw or tsc)";
    return false;
  }
  return true;
}

const char* base_clock_name(BaseClockKind kind) {
  switch (kind) {
  case BaseClockKind::Monotonic:
    return "monotonic";
  case BaseClockKind::MonotonicRaw:
    return "monotonic_raw";
  case BaseClockKind::Tsc:
    return "tsc";
  }
  return "?";
}

BaseClockKind current_base_clock() {
  return detail::g_kind;
}

bool tsc_flags_are_invariant(const std::string& cpuinfo_text) {
  std::istringstream in(cpuinfo_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(
        line.substr(line.find(':') == std::string::npos ? line.size() : line.find(':') + 1));
    bool constant = false, nonstop = false;
    for (std::string w; words >> w;) {
      constant |= w == "constant_tsc";
      nonstop |= w == "nonstop_tsc";
    }
    return constant && nonstop; // every core lists the same flags; the first line decides
  }
  return false;
}

bool tsc_is_invariant(std::string& why_not) {
  if (!HTRACE_HAVE_TSC) {
    why_not = "this CPU architecture has no TSC";
    return false;
  }
  std::ifstream in("/proc/cpuinfo");
  if (!in) {
    why_not = "cannot read /proc/cpuinfo to check the TSC flags";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  if (!tsc_flags_are_invariant(text.str())) {
    why_not = "/proc/cpuinfo lacks constant_tsc and/or nonstop_tsc: the TSC is not invariant here";
    return false;
  }
  return true;
}

TscCalibration calibrate_tsc(Nanoseconds duration_ns) {
  // Bracket each TSC read by two clock reads and keep the tightest bracket at both ends, so that
  // a preemption during calibration does not skew the rate.
  auto sample = [](std::uint64_t& tsc, Nanoseconds& ns) {
    Nanoseconds best = INT64_MAX;
    for (int i = 0; i < 16; ++i) {
      const Nanoseconds a = detail::read_posix(CLOCK_MONOTONIC_RAW);
      const std::uint64_t t = detail::read_tsc();
      const Nanoseconds b = detail::read_posix(CLOCK_MONOTONIC_RAW);
      if (b - a < best) {
        best = b - a;
        tsc = t;
        ns = a + (b - a) / 2;
      }
    }
  };
  std::uint64_t tsc0 = 0, tsc1 = 0;
  Nanoseconds ns0 = 0, ns1 = 0;
  sample(tsc0, ns0);
  std::this_thread::sleep_for(std::chrono::nanoseconds(duration_ns));
  sample(tsc1, ns1);
  TscCalibration c;
  c.tsc_at_origin = tsc0;
  c.ns_at_origin = ns0;
  c.shift = 32;
  const double ns_per_tick = static_cast<double>(ns1 - ns0) / static_cast<double>(tsc1 - tsc0);
  c.mult = static_cast<std::uint64_t>(ns_per_tick * static_cast<double>(1ull << c.shift) + 0.5);
  return c;
}

void install_base_clock(BaseClockKind kind, const TscCalibration& calibration) {
  detail::g_tsc = calibration;
  detail::g_kind = kind;
}

// ---- stamps ----
namespace detail {
StampKind g_stamp_kind = StampKind::Undecided;
} // namespace detail

namespace {

struct Anchor {
  Stamp tsc;
  Nanoseconds ns;
};

// Append-only, published by the release store of the count: readers (converters, possibly in a
// signal handler) never lock. At most ten anchors per second after the first 6 s: 2^20 anchors
// (16 MiB of address space, resident only as they are written) last 29 hours; later conversions
// extrapolate from the last one (the error is the TSC's rate change against the base clock since
// then).
constexpr std::size_t kMaxAnchors = 1 << 20;
Anchor g_anchors[kMaxAnchors];
std::atomic<std::size_t> g_anchor_count{0};
std::atomic<bool> g_anchor_busy{false};
double g_ticks_per_ns = 1.0; ///< first estimate, written before the second anchor is published
/// The shortest gap between anchors (10 ms) in ticks: maybe_anchor()'s test on integers.
Stamp g_min_gap_ticks = 0;

/// The POSIX clock TSC stamps are mapped onto: the base clock (monotonic or monotonic_raw).
clockid_t anchored_clock() {
  return detail::g_kind == BaseClockKind::MonotonicRaw ? CLOCK_MONOTONIC_RAW : CLOCK_MONOTONIC;
}

/// One (TSC, base clock) pair: the TSC read between two clock reads, the tightest bracket of a
/// few tries (a preemption or an interrupt inside one try does not skew the pair).
Anchor read_anchor() {
  const clockid_t id = anchored_clock();
  Anchor best{0, 0};
  Nanoseconds width = INT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const Nanoseconds a = detail::read_posix(id);
    const Stamp t = static_cast<Stamp>(detail::read_tsc());
    const Nanoseconds b = detail::read_posix(id);
    if (b - a < width) {
      width = b - a;
      best = {t, a + (b - a) / 2};
    }
  }
  return best;
}

bool publish_anchor(const Anchor& a) {
  const std::size_t n = g_anchor_count.load(std::memory_order_relaxed);
  if (n >= kMaxAnchors) return false;
  // Both clocks must advance, or a segment would have a rate of 0 or below.
  if (n > 0 && (a.tsc <= g_anchors[n - 1].tsc || a.ns <= g_anchors[n - 1].ns)) return false;
  g_anchors[n] = a;
  g_anchor_count.store(n + 1, std::memory_order_release);
  return true;
}

std::once_flag g_stamp_choice;

void decide(bool use_tsc) {
  std::string why_not;
  if (use_tsc && detail::g_kind != BaseClockKind::Tsc && tsc_is_invariant(why_not)) {
    // Two anchors 2 ms apart give the first rate (about 1e-5); later anchors refine it.
    const Anchor first = read_anchor();
    Anchor second = first;
    while (second.ns - first.ns < 2'000'000)
      second = read_anchor();
    g_ticks_per_ns =
        static_cast<double>(second.tsc - first.tsc) / static_cast<double>(second.ns - first.ns);
    g_min_gap_ticks = second.tsc - first.tsc;
    publish_anchor(first);
    publish_anchor(second);
    detail::g_stamp_kind = StampKind::Tsc;
  } else {
    detail::g_stamp_kind = StampKind::BaseClock;
  }
}

} // namespace

void choose_stamp_source(bool use_tsc) {
  std::call_once(g_stamp_choice, decide, use_tsc);
}

StampKind stamp_kind() {
  return detail::g_stamp_kind;
}

Stamp detail::stamp_slow() {
  if (g_stamp_kind == StampKind::Undecided) {
    const Options& o = run_options().options;
    // A POSIX base clock is in force from the first stamp on (events before MPI_Init included);
    // the TSC base clock needs its node-wide calibration in MPI_Init.
    BaseClockKind kind = BaseClockKind::Monotonic;
    std::string error;
    if (parse_base_clock(o.clock, kind, error) && kind != BaseClockKind::Tsc)
      install_base_clock(kind, TscCalibration{});
    choose_stamp_source(o.tsc_stamps && kind != BaseClockKind::Tsc);
    if (g_stamp_kind == StampKind::Tsc) return static_cast<Stamp>(read_tsc());
  }
  return now();
}

Stamp stamp_before(Stamp s, Nanoseconds ago_ns) {
  if (detail::g_stamp_kind != StampKind::Tsc) return s - ago_ns;
  return s - static_cast<Stamp>(static_cast<double>(ago_ns) * g_ticks_per_ns);
}

void maybe_anchor() {
  if (detail::g_stamp_kind == StampKind::Tsc) maybe_anchor(static_cast<Stamp>(detail::read_tsc()));
}

void maybe_anchor(Stamp t) {
  if (detail::g_stamp_kind != StampKind::Tsc) return;
  const std::size_t n = g_anchor_count.load(std::memory_order_acquire);
  if (n < 2 || n >= kMaxAnchors) return;
  // Dense early, then sparse: the gap is 1/64 of the run so far, between 10 and 100 ms, and at
  // first no longer than the anchors' span so far (2, 4, 8 ms...), so that a stamp is never
  // extrapolated further than the baseline its rate comes from. The recorder anchors before it
  // converts a buffer, so a buffer that took longer than the gap to fill is interpolated whole:
  // where the base clock changes rate against the TSC (NTP slewing CLOCK_MONOTONIC, or the tests'
  // clock-rate step), a buffer extrapolated at the old rate and the next one interpolated at the
  // new would meet in a jump of the rate change times the gap. Most calls end at the first test.
  if (t - g_anchors[n - 1].tsc < g_min_gap_ticks) return;
  const double age_ns = static_cast<double>(t - g_anchors[0].tsc) / g_ticks_per_ns;
  const double gap_ns = static_cast<double>(t - g_anchors[n - 1].tsc) / g_ticks_per_ns;
  const double span_ns = static_cast<double>(g_anchors[n - 1].ns - g_anchors[0].ns);
  if (gap_ns < std::min(std::clamp(age_ns / 64, 1e7, 1e8), span_ns)) return;
  if (g_anchor_busy.exchange(true, std::memory_order_acquire)) return; // someone else anchors
  publish_anchor(read_anchor());
  g_anchor_busy.store(false, std::memory_order_release);
}

StampConverter::StampConverter(const GlobalTimeMap& map) : map_(map) {
  if (detail::g_stamp_kind == StampKind::Tsc)
    count_ = seen_ = g_anchor_count.load(std::memory_order_acquire);
  if (count_ < 2) count_ = 0;
}

bool StampConverter::current() const {
  // Without anchors the one segment is based at the first stamp converted; a fresh converter
  // bases it anew, so that the fixed-point rate's rounding never adds up over a long run.
  return count_ != 0 && g_anchor_count.load(std::memory_order_acquire) == seen_;
}

std::int64_t StampConverter::fixed_rate(double rate) {
  return std::llround(std::ldexp(rate, kRateBits));
}

void StampConverter::select(Stamp s) {
  // The global map is linear in base-clock ns with rate (1 - slope).
  const double map_rate = 1.0 - map_.slope;
  if (count_ == 0) {
    // Base-clock ns: one segment around the first stamp converted.
    seg_stamp_ = s;
    seg_ns_ = map_.to_global(s);
    seg_rate_ = fixed_rate(map_rate);
    seg_begin_ = INT64_MIN;
    seg_end_ = INT64_MAX;
    return;
  }
  // Segment i spans [anchor i, anchor i+1); the first one extends to -inf, the last anchor's
  // segment to +inf. Beyond the last anchor the rate comes from the longest baseline of the last
  // second (up to the first anchor), and at least the last two anchors' (they may be further
  // apart): an anchor's error (half its bracket, ~15 ns) divided by a baseline of 2 ms would be a
  // rate error of 7 ppm, 70 ns after another 10 ms.
  const Anchor* a = g_anchors;
  const std::size_t n = count_;
  std::size_t i = static_cast<std::size_t>(
      std::upper_bound(a, a + n, s, [](Stamp v, const Anchor& x) { return v < x.tsc; }) - a);
  i = i == 0 ? 0 : i - 1; // anchor at or before s (0 when s precedes every anchor)
  std::size_t from = std::min(i, n - 2), to = from + 1; // the anchors whose rate applies
  if (i + 1 == n) {
    constexpr Nanoseconds kBaselineNs = 1'000'000'000;
    const Anchor* oldest =
        std::lower_bound(a, a + n - 1, a[n - 1].ns - kBaselineNs,
                         [](const Anchor& x, Nanoseconds v) { return x.ns < v; });
    from = std::min(static_cast<std::size_t>(oldest - a), n - 2);
    to = n - 1;
  }
  const double ns_per_tick =
      static_cast<double>(a[to].ns - a[from].ns) / static_cast<double>(a[to].tsc - a[from].tsc);
  seg_stamp_ = a[i].tsc;
  seg_ns_ = map_.to_global(a[i].ns);
  seg_rate_ = fixed_rate(ns_per_tick * map_rate);
  seg_begin_ = i == 0 ? INT64_MIN : a[i].tsc;
  seg_end_ = i + 1 >= n ? INT64_MAX : a[i + 1].tsc;
}

} // namespace htrace::clock
