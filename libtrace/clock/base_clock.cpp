#include "clock/base_clock.h"

#include <fstream>
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

} // namespace htrace::clock
