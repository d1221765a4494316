// Stamps taken after the last anchor follow the base clock at the rate of the anchors before it,
// also when those anchors lie further apart than the one-second baseline the rate is taken from
// (a run whose buffers fill rarely anchors rarely).
#include "clock/base_clock.h"

#include <chrono>
#include <gtest/gtest.h>
#include <thread>

using namespace htrace::clock;
using namespace std::chrono_literals;

TEST(StampConverter, ExtrapolatesPastAnchorsFurtherApartThanTheBaseline) {
  choose_stamp_source(true);
  if (stamp_kind() != StampKind::Tsc) GTEST_SKIP() << "no invariant TSC: stamps are clock ns";
  std::this_thread::sleep_for(1200ms);
  maybe_anchor(); // the third anchor, 1.2 s after the first two
  std::this_thread::sleep_for(20ms);
  Nanoseconds before = 0, after = 0;
  Stamp s = 0;
  for (int i = 0; i < 5 && (i == 0 || after - before > 2000); ++i) {
    before = now();
    s = stamp();
    after = now();
  }
  StampConverter convert; // identity map: base-clock ns
  EXPECT_NEAR(static_cast<double>(convert(s)), static_cast<double>(before + (after - before) / 2),
              2000.0 + static_cast<double>(after - before));
}
