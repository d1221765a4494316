// The pre-synchronization's clock-offset model: a line through INIT and FINAL, or linear pieces
// through every measurement taken during the run, each checked at and between the measurements.
#include "correct/model.h"

#include <gtest/gtest.h>

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
