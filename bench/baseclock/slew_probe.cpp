// slew_probe: how the base clocks htrace can read behave while the kernel slews the system time
// the way NTP daemons do (adjtime(3): CLOCK_REALTIME and CLOCK_MONOTONIC run up to 500 ppm fast
// or slow until the requested correction is done; CLOCK_MONOTONIC_RAW and the TSC are never
// adjusted). It samples CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW and the TSC every 10 ms for SECONDS,
// slews the system time by +SLEW_US at 1/5 of the run and by -SLEW_US at 3/5 (so the machine
// ends where it started), and prints, per clock, what a trace on it would suffer: the largest
// rate change against the TSC (the oscillator) over 1 s windows, and the largest error of
// offsets interpolated linearly between measurements every K seconds (K = 1, 10, 60 and the
// whole run), which is what htrace-correct does between clock measurements.
//
// usage: slew_probe [SECONDS (40)] [SLEW_US (2000)]   (root: adjtime changes the system time)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sys/time.h>
#include <thread>
#include <vector>
#include <x86intrin.h>

namespace {

struct Sample {
  double tsc;       // ticks
  double monotonic; // ns
  double raw;       // ns
};

double read_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// The three clocks read within the tightest of a few brackets (a preemption inside one try
// would pair readings of different instants).
Sample sample() {
  Sample best{};
  double width = 1e18;
  for (int i = 0; i < 8; ++i) {
    const double a = read_ns(CLOCK_MONOTONIC_RAW);
    const double m = read_ns(CLOCK_MONOTONIC);
    const double t = double(__rdtsc());
    const double b = read_ns(CLOCK_MONOTONIC_RAW);
    if (b - a < width) width = b - a, best = {t, m, (a + b) / 2};
  }
  return best;
}

bool slew(long us) {
  timeval delta{us / 1000000, us % 1000000};
  if (delta.tv_usec < 0) delta.tv_sec -= 1, delta.tv_usec += 1000000;
  if (adjtime(&delta, nullptr) != 0) {
    std::perror("slew_probe: adjtime");
    return false;
  }
  return true;
}

long slew_left_us() {
  timeval left{};
  adjtime(nullptr, &left);
  return long(left.tv_sec) * 1000000 + left.tv_usec;
}

// Largest |offset - linear interpolation between the offsets every `interval` samples| (the
// last stretch ends at the last sample).
double interpolation_error(const std::vector<double>& t, const std::vector<double>& offset,
                           size_t interval) {
  double worst = 0;
  for (size_t a = 0; a + 1 < t.size(); a += interval) {
    const size_t b = std::min(a + interval, t.size() - 1);
    for (size_t i = a; i <= b; ++i) {
      const double line = offset[a] + (offset[b] - offset[a]) * (t[i] - t[a]) / (t[b] - t[a]);
      worst = std::max(worst, std::fabs(offset[i] - line));
    }
  }
  return worst;
}

} // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 40;
  const long slew_us = argc > 2 ? std::atol(argv[2]) : 2000;
  if (seconds < 10 || slew_us <= 0) {
    std::fprintf(stderr, "usage: slew_probe [SECONDS >= 10] [SLEW_US > 0]\n");
    return 2;
  }
  if (slew_left_us() != 0) {
    std::fprintf(stderr, "slew_probe: a slew is in progress already (an NTP daemon?)\n");
    return 1;
  }
  constexpr auto kPeriod = std::chrono::milliseconds(10);
  const size_t n = size_t(seconds * 100);
  std::vector<Sample> s;
  s.reserve(n);
  auto next = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; ++i) {
    if (i == n / 5 && !slew(slew_us)) return 1;
    if (i == 3 * n / 5) {
      if (slew_left_us() != 0) std::fprintf(stderr, "slew_probe: the first slew is not done\n");
      if (!slew(-slew_us)) return 1;
    }
    s.push_back(sample());
    next += kPeriod;
    std::this_thread::sleep_until(next);
  }
  while (slew_left_us() != 0) // leave the system time as it was
    std::this_thread::sleep_for(std::chrono::milliseconds(100));

  // The TSC in ns of CLOCK_MONOTONIC_RAW over the whole run is the reference (the oscillator);
  // each clock's offset from it is what a clock model on that clock has to follow.
  const double ns_per_tick = (s.back().raw - s.front().raw) / (s.back().tsc - s.front().tsc);
  std::vector<double> t(n), mono(n), raw(n);
  for (size_t i = 0; i < n; ++i) {
    t[i] = (s[i].tsc - s[0].tsc) * ns_per_tick;
    mono[i] = s[i].monotonic - s[0].monotonic - t[i];
    raw[i] = s[i].raw - s[0].raw - t[i];
  }
  std::printf("slew_probe: %.0f s, %zu samples, system time slewed by +%ld us at %.0f s and "
              "by -%ld us at %.0f s\n",
              seconds, n, slew_us, seconds / 5, slew_us, 3 * seconds / 5);
  std::printf("%-14s %14s %12s %12s %12s %12s\n", "clock", "rate_step_ppm", "err_1s_ns",
              "err_10s_ns", "err_60s_ns", "err_run_ns");
  for (const auto& [name, offset] :
       {std::pair{"monotonic", &mono}, std::pair{"monotonic_raw", &raw}}) {
    double lo = 1e18, hi = -1e18; // the rate over 1 s windows, against the TSC
    for (size_t i = 0; i + 100 < n; i += 100) {
      const double ppm = ((*offset)[i + 100] - (*offset)[i]) / (t[i + 100] - t[i]) * 1e6;
      lo = std::min(lo, ppm), hi = std::max(hi, ppm);
    }
    std::printf("%-14s %14.1f %12.0f %12.0f %12.0f %12.0f\n", name, hi - lo,
                interpolation_error(t, *offset, 100), interpolation_error(t, *offset, 1000),
                interpolation_error(t, *offset, 6000), interpolation_error(t, *offset, n - 1));
  }
  return 0;
}
