// The adaptive interval of the measurements during the run (clock/run_interval.h) and the
// parser of HTRACE_SYNC_INTERVAL_MS, without MPI.
#include "clock/run_interval.h"
#include "common/sync_interval.h"

#include <gtest/gtest.h>

using namespace htrace;
using namespace htrace::clock;
using Verdict = AdaptiveInterval::Verdict;

namespace {
constexpr std::int64_t kS = 1'000'000'000;

/// Feeds measurements of `offset(t)` (+- 6.5 us, loopback's bound) at the times the rule asks
/// for, from 0 to `end`; returns the measurement times after the first.
template <class Offset>
std::vector<std::int64_t> schedule(AdaptiveInterval& rule, Offset offset, std::int64_t end) {
  std::vector<std::int64_t> times;
  for (std::int64_t t = 0; t <= end; t += rule.interval_ns()) {
    rule.add({t, offset(t), 6'500});
    if (t > 0) times.push_back(t);
  }
  return times;
}
} // namespace

TEST(AdaptiveInterval, StartsShortAndGrowsToTheCeilingOnASteadyClock) {
  AdaptiveInterval rule;
  EXPECT_EQ(rule.interval_ns(), 2 * kS);
  // 3 ppm of steady drift plus 20 ns of noise: on the line within the bounds throughout.
  const auto times = schedule(
      rule, [](std::int64_t t) { return t * 3 / 1'000'000 + (t / kS % 2) * 20; }, 600 * kS);
  EXPECT_EQ(rule.interval_ns(), 60 * kS);
  // 2, 4, then growing by half: about 17 measurements in 10 minutes.
  ASSERT_GE(times.size(), 3u);
  EXPECT_EQ(times[0], 2 * kS);
  EXPECT_EQ(times[1], 4 * kS);
  EXPECT_EQ(times[2], 7 * kS);
  EXPECT_GE(times.size(), 14u);
  EXPECT_LE(times.size(), 18u);
}

TEST(AdaptiveInterval, ARateStepShortensTheIntervalAndANewLineFollows) {
  AdaptiveInterval rule;
  // 20 ppm from 32 s on (the case): the first measurement after the step is off the
  // line, the interval halves, and two more measurements land on the new line before 61 s.
  const auto offset = [](std::int64_t t) { return t > 32 * kS ? (t - 32 * kS) / 50'000 : 0; };
  std::vector<std::int64_t> after_step;
  Verdict first_after = Verdict::Learning;
  std::int64_t before_interval = 0;
  for (std::int64_t t = 0; t <= 61 * kS; t += rule.interval_ns()) {
    if (t > 32 * kS && after_step.empty()) before_interval = rule.interval_ns();
    const Verdict v = rule.add({t, offset(t), 6'500});
    if (t > 32 * kS) {
      if (after_step.empty()) first_after = v;
      after_step.push_back(t);
    }
  }
  EXPECT_EQ(first_after, Verdict::OffLine);
  ASSERT_GE(after_step.size(), 3u);
  EXPECT_LE(after_step.back() - after_step.front(), before_interval);
}

TEST(AdaptiveInterval, HalvesDownToTheFloorWhileTheClockKeepsChanging) {
  AdaptiveInterval rule;
  // A clock whose rate grows by 40 ppm a second (a quadratic offset): a line through two
  // measurements 1 s apart misses the next by 40 us, beyond the bounds (26 us): off the line
  // again and again.
  const auto offset = [](std::int64_t t) {
    const double s = static_cast<double>(t) / kS;
    return static_cast<std::int64_t>(s * s * 20'000.0);
  };
  schedule(rule, offset, 120 * kS);
  EXPECT_EQ(rule.interval_ns(), 1 * kS);
}

TEST(AdaptiveInterval, ThePredictionCarriesTheBounds) {
  AdaptiveInterval rule;
  rule.add({0, 0, 1000});
  rule.add({2 * kS, 0, 1000});
  // Extrapolating to 4 s weighs the first point -1 and the second 2: 1000 + 2000 + 1000.
  EXPECT_EQ(rule.add({4 * kS, 4000, 1000}), Verdict::OnLine);
  EXPECT_EQ(rule.tolerance_ns(), 4000);
  AdaptiveInterval other;
  other.add({0, 0, 1000});
  other.add({2 * kS, 0, 1000});
  EXPECT_EQ(other.add({4 * kS, 4001, 1000}), Verdict::OffLine);
}

TEST(SyncInterval, ParsesAutoAndMilliseconds) {
  std::string error;
  EXPECT_TRUE(parse_sync_interval("auto", error)->adaptive);
  const auto fixed = parse_sync_interval("500", error);
  ASSERT_TRUE(fixed);
  EXPECT_FALSE(fixed->adaptive);
  EXPECT_EQ(fixed->fixed_ms, 500);
  EXPECT_EQ(parse_sync_interval("0", error)->fixed_ms, 0);
  for (const char* bad : {"", "-1", "86400001", "5s", "Auto", " 5", "99999999999999999999"}) {
    EXPECT_FALSE(parse_sync_interval(bad, error)) << bad;
    EXPECT_NE(error.find("HTRACE_SYNC_INTERVAL_MS"), std::string::npos);
  }
}
