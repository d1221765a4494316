// Linear models, nested clocks (flatten/unflatten) and the base clocks, without MPI.
#include "clock/base_clock.h"
#include "clock/global_clock.h"
#include "clock/linear_model.h"

#include <chrono>
#include <gtest/gtest.h>
#include <thread>

using namespace htrace::clock;

TEST(LinearModel, FitRecoversAnExactLine) {
  std::vector<FitPoint> pts;
  const std::int64_t t0 = 5'000'000'000'000; // ~1.4 h of uptime in ns: far beyond double's exact ns
  for (int i = 0; i < 10; ++i) {
    const std::int64_t t = t0 + i * 1'000'000;
    pts.push_back({t, 2'500'000'123 + (t - t0) / 20'000}); // slope 5e-5
  }
  const FitResult r = fit_linear_model(pts);
  EXPECT_NEAR(r.model.slope, 5e-5, 1e-9);
  for (const auto& p : pts)
    EXPECT_NEAR(static_cast<double>(r.model.offset_at(p.time_ns)), static_cast<double>(p.offset_ns),
                1.0);
  EXPECT_LT(r.slope_stderr, 1e-9);
}

TEST(LinearModel, SinglePointGivesOffsetOnly) {
  const FitResult r = fit_linear_model({{1000, -42}});
  EXPECT_EQ(r.model.slope, 0.0);
  EXPECT_EQ(r.model.offset_at(123456789), -42);
}

TEST(LinearModel, ComposeEqualsApplyingBoth) {
  const LinearModel inner{1'000'000'000, 3'000'000'000, 2e-5};
  const LinearModel outer{4'000'000'000, -1'234'567, -7e-6};
  const LinearModel both = compose(outer, inner);
  for (std::int64_t t = 0; t < 20'000'000'000; t += 1'333'333'333)
    EXPECT_NEAR(static_cast<double>(both.to_reference(t)),
                static_cast<double>(outer.to_reference(inner.to_reference(t))), 2.0);
}

TEST(GlobalClock, FlattenUnflattenRoundTrip) {
  std::int64_t fake = 7'000'000'000;
  TimeSource source = [&] { return fake; };
  GlobalClock c = GlobalClock(source)
                      .with({6'000'000'000, 2'500'000'000, 1e-5})
                      .with({4'000'000'000, -37'000, -3e-6});
  const auto bytes = c.flatten();
  GlobalClock back(source);
  std::string error;
  ASSERT_TRUE(GlobalClock::unflatten(bytes, source, back, error)) << error;
  ASSERT_EQ(back.models().size(), 2u);
  for (std::int64_t t = 0; t < 30'000'000'000; t += 999'999'937)
    EXPECT_EQ(back.to_global(t), c.to_global(t));
  EXPECT_EQ(back.now(), c.now());

  auto bad = bytes;
  bad.pop_back();
  EXPECT_FALSE(GlobalClock::unflatten(bad, source, back, error));
  EXPECT_NE(error.find("size"), std::string::npos);
  bad = bytes;
  bad[0] ^= 0xff;
  EXPECT_FALSE(GlobalClock::unflatten(bad, source, back, error));
}

TEST(GlobalClock, TimeMapMatchesTheChain) {
  GlobalClock c = GlobalClock([] { return 0; })
                      .with({6'000'000'000, 2'500'000'000, 1e-5})
                      .with({4'000'000'000, -37'000, -3e-6});
  const std::int64_t origin = 6'500'000'000;
  const GlobalTimeMap map = c.to_time_map(origin);
  // Within +-10 s of the origin the single map and the chain agree to rounding.
  for (std::int64_t t = origin - 10'000'000'000; t < origin + 10'000'000'000; t += 777'777'777)
    EXPECT_NEAR(static_cast<double>(map.to_global(t)), static_cast<double>(c.to_global(t)), 2.0);
}

TEST(BaseClock, ParsesNamesAndRejectsOthers) {
  BaseClockKind k;
  std::string error;
  EXPECT_TRUE(parse_base_clock("monotonic_raw", k, error));
  EXPECT_EQ(k, BaseClockKind::MonotonicRaw);
  EXPECT_FALSE(parse_base_clock("realtime", k, error));
  EXPECT_NE(error.find("realtime"), std::string::npos);
}

TEST(BaseClock, TscFlagsNeedConstantAndNonstop) {
  EXPECT_TRUE(tsc_flags_are_invariant(
      "processor: 0\nflags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc cpuid\n"));
  EXPECT_FALSE(tsc_flags_are_invariant("flags\t\t: fpu tsc constant_tsc rep_good cpuid\n"));
  EXPECT_FALSE(tsc_flags_are_invariant("flags\t\t: fpu tsc nonstop_tsc\n"));
  EXPECT_FALSE(tsc_flags_are_invariant("no flags line\n"));
}

TEST(BaseClock, TscCalibrationTracksMonotonicRaw) {
  std::string why;
  if (!tsc_is_invariant(why)) GTEST_SKIP() << why;
  const TscCalibration cal = calibrate_tsc(20'000'000);
  EXPECT_GT(cal.ticks_per_ns(), 0.1); // >100 MHz
  EXPECT_LT(cal.ticks_per_ns(), 10.0);
  install_base_clock(BaseClockKind::Tsc, cal);
  const std::int64_t a_tsc = now(), a_raw = detail::read_posix(CLOCK_MONOTONIC_RAW);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::int64_t b_tsc = now(), b_raw = detail::read_posix(CLOCK_MONOTONIC_RAW);
  install_base_clock(BaseClockKind::Monotonic);
  // Starts on the raw clock and keeps its rate: 100 ms apart, 200 ppm of calibration error would
  // be 20 us; a wrong frequency would be off by milliseconds.
  EXPECT_LT(std::llabs(a_tsc - a_raw), 200'000);
  EXPECT_LT(std::llabs((b_tsc - a_tsc) - (b_raw - a_raw)), 20'000);
}

TEST(BaseClock, NowIsMonotonicAndCheap) {
  const int n = 200000;
  std::int64_t prev = now();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const std::int64_t t = now();
    ASSERT_GE(t, prev);
    prev = t;
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
      n;
  std::printf("clock::now() on CLOCK_MONOTONIC: %.1f ns per call\n", ns);
  EXPECT_LT(ns, 2000.0); // generous: loaded shared machine; the benchmark quotes the real figure
}
