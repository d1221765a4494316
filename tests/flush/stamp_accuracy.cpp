// stamp_accuracy: how far event timestamps read from the TSC (clock::stamp()) are from the
// node's base clock (HTRACE_CLOCK: CLOCK_MONOTONIC or CLOCK_MONOTONIC_RAW) after the recorder's
// conversion, the way the recorder uses it: stamps are taken continuously, and every FLUSH_US the
// recorder's steps run (maybe_anchor(), then a fresh StampConverter converts the stamps taken since
// the last flush). Each stamp is bracketed by two base clock reads; its error is converted -
// bracket midpoint. Under a time namespace or the clock-rate shim (tests/clock/clock_rate_shim.c)
// this shows that stamps follow the shifted or scaled clock.
//
// usage: stamp_accuracy [SECONDS (3)] [FLUSH_US (500)] [SAMPLE_US (50)]
// prints: stamps=tsc|base_clock samples=N median_ns= p99_ns= max_ns= signed_median_ns= bracket_ns=
//         mono_vs_realtime_ppm= (the rate of the base clock against CLOCK_REALTIME)
#include "clock/base_clock.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace htrace::clock;

namespace {

struct Sample {
  Stamp stamp;
  Nanoseconds mono_mid;
  Nanoseconds width;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

} // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const Nanoseconds flush_ns =
      static_cast<Nanoseconds>((argc > 2 ? std::atof(argv[2]) : 500) * 1e3);
  const Nanoseconds sample_ns =
      static_cast<Nanoseconds>((argc > 3 ? std::atof(argv[3]) : 50) * 1e3);
  if (seconds <= 0 || flush_ns <= 0 || sample_ns <= 0) {
    std::fprintf(stderr, "usage: stamp_accuracy [SECONDS] [FLUSH_US] [SAMPLE_US]\n");
    return 2;
  }
  stamp(); // chooses the stamp source (HTRACE_TSC_STAMPS, HTRACE_CLOCK) like the tracer
  std::vector<Sample> pending;
  std::vector<double> errors, widths;
  const Nanoseconds start = now();
  const Nanoseconds start_realtime = posix_now(CLOCK_REALTIME);
  Nanoseconds next_flush = start + flush_ns, next_sample = start;
  for (;;) {
    const Nanoseconds now_ns = now();
    if (now_ns - start > static_cast<Nanoseconds>(seconds * 1e9)) break;
    if (now_ns >= next_sample) {
      const Nanoseconds a = now();
      const Stamp s = stamp();
      const Nanoseconds b = now();
      pending.push_back({s, a + (b - a) / 2, b - a});
      next_sample += sample_ns;
    }
    if (now_ns >= next_flush) {
      maybe_anchor();
      StampConverter convert; // identity global map: base-clock ns
      for (const Sample& p : pending) {
        // A bracket widened by an interrupt or a preemption says nothing about the conversion.
        if (p.width > 200) continue;
        errors.push_back(static_cast<double>(convert(p.stamp) - p.mono_mid));
        widths.push_back(static_cast<double>(p.width));
      }
      pending.clear();
      next_flush += flush_ns;
    }
  }
  // The clock-rate shim scales CLOCK_MONOTONIC(_RAW) but not CLOCK_REALTIME: this shows it was
  // active.
  const double rate_ppm = (static_cast<double>(now() - start) /
                               static_cast<double>(posix_now(CLOCK_REALTIME) - start_realtime) -
                           1.0) *
                          1e6;
  std::vector<double> abs_errors(errors.size());
  std::transform(errors.begin(), errors.end(), abs_errors.begin(),
                 [](double e) { return std::fabs(e); });
  std::printf("stamps=%s samples=%zu median_ns=%.0f p99_ns=%.0f max_ns=%.0f signed_median_ns=%.0f "
              "bracket_ns=%.0f mono_vs_realtime_ppm=%.1f\n",
              stamp_kind() == StampKind::Tsc ? "tsc" : "base_clock", errors.size(),
              percentile(abs_errors, 0.5), percentile(abs_errors, 0.99),
              abs_errors.empty() ? 0.0 : *std::max_element(abs_errors.begin(), abs_errors.end()),
              percentile(errors, 0.5), percentile(widths, 0.5), rate_ppm);
  return errors.empty() ? 1 : 0;
}
