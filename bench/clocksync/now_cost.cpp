// Cost of htrace::clock::now() per base clock (median of 15 batches of 1e6 calls), and of the
// raw clock_gettime for comparison: the per-event price of a timestamp.
#include "clock/base_clock.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace htrace::clock;

template <typename F> double median_ns_per_call(F&& read) {
  std::vector<double> batches;
  std::int64_t sink = 0;
  for (int b = 0; b < 15; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000000; ++i)
      sink += read();
    batches.push_back(
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
        1e6);
  }
  std::sort(batches.begin(), batches.end());
  if (sink == 42) std::puts("");
  return batches[batches.size() / 2];
}

int main() {
  std::printf("clock_gettime(CLOCK_MONOTONIC) direct: %6.1f ns\n",
              median_ns_per_call([] { return posix_now(CLOCK_MONOTONIC); }));
  install_base_clock(BaseClockKind::Monotonic);
  std::printf("clock::now() monotonic:                %6.1f ns\n",
              median_ns_per_call([] { return now(); }));
  install_base_clock(BaseClockKind::MonotonicRaw);
  std::printf("clock::now() monotonic_raw:            %6.1f ns\n",
              median_ns_per_call([] { return now(); }));
  std::string why;
  if (tsc_is_invariant(why)) {
    install_base_clock(BaseClockKind::Tsc, calibrate_tsc(20'000'000));
    std::printf("clock::now() tsc:                      %6.1f ns\n",
                median_ns_per_call([] { return now(); }));
  } else {
    std::printf("clock::now() tsc: unavailable (%s)\n", why.c_str());
  }
  return 0;
}
