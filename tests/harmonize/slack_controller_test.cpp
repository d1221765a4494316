// The adaptive slack of MPIX_Harmonize: grows after a miss, shrinks after a run of successes,
// never below the measured floor.
#include "harmonize/slack_controller.h"

#include <gtest/gtest.h>

using htrace::harmonize::SlackController;
using htrace::harmonize::SlackParameters;

TEST(SlackController, StartsAtTwiceTheMeasuredRoundTrip) {
  SlackController c(SlackParameters{});
  c.set_measured_floor(40000);
  EXPECT_EQ(c.slack_ns(), 80000);
  SlackParameters configured;
  configured.initial_ns = 500000;
  SlackController d(configured);
  d.set_measured_floor(40000);
  EXPECT_EQ(d.slack_ns(), 500000);
}

TEST(SlackController, GrowsAfterAMissAndShrinksAfterSuccesses) {
  SlackParameters p;
  p.grow_factor = 1.5;
  p.shrink_factor = 0.5;
  p.shrink_after = 4;
  SlackController c(p);
  c.set_measured_floor(10000); // slack 20 us
  c.record_round(false);
  EXPECT_EQ(c.slack_ns(), 30000);
  c.record_round(false);
  EXPECT_EQ(c.slack_ns(), 45000);
  for (int i = 0; i < 3; ++i)
    c.record_round(true);
  EXPECT_EQ(c.slack_ns(), 45000); // not yet: 3 of 4
  c.record_round(true);
  EXPECT_EQ(c.slack_ns(), 22500);
  // A miss in the middle of a run restarts the count.
  for (int i = 0; i < 3; ++i)
    c.record_round(true);
  c.record_round(false);
  EXPECT_EQ(c.slack_ns(), 33750);
  EXPECT_EQ(c.success_streak(), 0);
  for (int i = 0; i < 3; ++i)
    c.record_round(true);
  EXPECT_EQ(c.slack_ns(), 33750);
  c.record_round(true);
  EXPECT_EQ(c.slack_ns(), 16875);
  // Long runs of success converge to the floor, not below.
  for (int i = 0; i < 100; ++i)
    c.record_round(true);
  EXPECT_EQ(c.slack_ns(), 10000);
}

TEST(SlackController, GrowthIsBounded) {
  SlackController c(SlackParameters{});
  c.set_measured_floor(100000);
  for (int i = 0; i < 200; ++i)
    c.record_round(false);
  EXPECT_EQ(c.slack_ns(), 1000000000);
}
