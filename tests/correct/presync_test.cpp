// The pre-synchronization's clock-offset model: a line through INIT and FINAL, or linear pieces
// through every measurement taken during the run, each checked at and between the measurements;
// the knots where a clock changed its rate between two measurements (clock_knots.h).
#include "correct/clock_knots.h"
#include "correct/model.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

using htrace::correct::Presync;

TEST(Presync, LineThroughTwoMeasurements) {
  Presync p;
  p.active = true;
  p.t0 = 1000, p.o0 = 50, p.slope = 0.5;
  EXPECT_EQ(p.apply(1000), 950);
  EXPECT_EQ(p.apply(1100), 1100 - 100);
  EXPECT_EQ(p.apply(900), 900 - 0);
}

TEST(Presync, PiecesThroughEveryMeasurement) {
  Presync p;
  p.active = true;
  // Offset 0 until t = 1000, then growing by 1 ns per 10 ns (a rate step), measured at 0, 1000
  // and 2000: exact at the kink, where a line through the ends would be 50 ns off.
  p.knots = {{0, 0}, {1000, 0}, {2000, 100}};
  EXPECT_EQ(p.piecewise_offset(0), 0);
  EXPECT_EQ(p.piecewise_offset(500), 0);
  EXPECT_EQ(p.piecewise_offset(1000), 0);
  EXPECT_EQ(p.piecewise_offset(1500), 50);
  EXPECT_EQ(p.piecewise_offset(2000), 100);
  EXPECT_EQ(p.apply(1500), 1450);
  // Beyond the ends, the nearest segment goes on.
  EXPECT_EQ(p.piecewise_offset(-1000), 0);
  EXPECT_EQ(p.piecewise_offset(3000), 200);
}

TEST(Presync, InactiveLeavesTimesAlone) {
  Presync p;
  p.knots = {{0, 10}, {10, 20}, {20, 30}};
  EXPECT_EQ(p.apply(15), 15);
}

namespace {
using htrace::correct::ClockKnot;
using htrace::correct::ClockMeasurement;
constexpr int64_t kS = 1'000'000'000;
// 20 ppm from 32 s on, measured +- 6.5 us at the adaptive rule's times (0, 2, 4, 7, ... s).
int64_t stepped(int64_t t) {
  return t > 32 * kS ? (t - 32 * kS) / 50'000 : 0;
}
std::vector<ClockMeasurement> measured(const std::vector<double>& seconds,
                                       int64_t (*offset)(int64_t)) {
  std::vector<ClockMeasurement> m;
  for (double s : seconds) {
    const int64_t t = std::llround(s * 1e9);
    m.push_back({t, offset(t), 6'500});
  }
  return m;
}
} // namespace

TEST(ClockKnots, AKnotWhereTheLinesAcrossAGapCross) {
  const auto m = measured({0, 2, 4, 7, 11.5, 18.25, 28.375, 43.5625, 51.15, 58.74, 61}, stepped);
  const std::vector<ClockKnot> knots = htrace::correct::knots_of(m);
  ASSERT_EQ(knots.size(), m.size() + 1);
  Presync p;
  p.active = true;
  p.knots = knots;
  // Exact to rounding everywhere, where the straight piece from 28.4 to 43.6 s was up to 190 us
  // off.
  for (int64_t t = 0; t <= 61 * kS; t += kS / 4)
    EXPECT_NEAR(double(p.piecewise_offset(t)), double(stepped(t)), 2.0) << t;
  EXPECT_EQ(htrace::correct::expected_clock_error(m), 0);
}

TEST(ClockKnots, NoKnotOnASteadyClockWithinItsScatter) {
  // 3 ppm of drift and +-3 us of alternating midpoint error.
  std::vector<ClockMeasurement> m;
  for (int i = 0; i < 12; ++i)
    m.push_back({i * 5 * kS, i * 5 * kS * 3 / 1'000'000 + (i % 2 ? 3'000 : -3'000), 6'500});
  EXPECT_EQ(htrace::correct::knots_of(m).size(), m.size());
  EXPECT_EQ(htrace::correct::expected_clock_error(m), 6'000);
  EXPECT_EQ(htrace::correct::expected_clock_error({m[0], m[1]}), -1);
}

TEST(ClockKnots, AStepThatTheNextMeasurementBarelySaw) {
  // The step at 32 s, measured 0.5 s after it (10 us off the old line, within its 6.5 us
  // bounds carried along the line) and again later: the kink still goes where the lines cross.
  const auto m =
      measured({0, 2, 4, 7, 11.5, 18.25, 28.375, 32.5, 39.25, 42.6, 47.7, 55.3, 61}, stepped);
  Presync p;
  p.active = true;
  p.knots = htrace::correct::knots_of(m);
  for (int64_t t = 0; t <= 61 * kS; t += kS / 4)
    EXPECT_NEAR(double(p.piecewise_offset(t)), double(stepped(t)), 2.0) << t;
}
