// InputTimes keeps 4-byte differences; times that do not fit are kept apart. Every time must come
// back exactly, read in order from any event.
#include "correct/input_times.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <vector>

using htrace::correct::InputTimes;

namespace {

// Mostly small steps (the common case), with every kind of time that must be kept apart mixed in.
std::vector<int64_t> awkward_times(size_t n) {
  std::mt19937_64 rng(42);
  std::vector<int64_t> t;
  int64_t now = 1'700'000'000'000'000'000; // ns since the epoch: beyond double precision
  for (size_t i = 0; i < n; ++i) {
    switch (rng() % 50) {
    case 0:
      now -= 1000;
      break; // goes back
    case 1:
      now += int64_t(1) << 32;
      break; // a gap of 4.29 s: too far
    case 2:
      now += (int64_t(1) << 32) - 1;
      break; // the marker's value: kept apart too
    case 3:
      now += (int64_t(1) << 32) - 2;
      break; // the largest step that fits
    case 4:
      break; // equal times
    case 5:  // extremes: the difference wraps
      t.push_back(rng() % 2 ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max());
      continue;
    default:
      now += int64_t(rng() % 5000);
    }
    t.push_back(now);
  }
  return t;
}

InputTimes fill(const std::vector<int64_t>& t) {
  InputTimes times;
  times.reserve(t.size());
  for (int64_t v : t)
    times.push_back(v);
  return times;
}

} // namespace

TEST(InputTimes, DecodesEveryTimeExactly) {
  const std::vector<int64_t> t = awkward_times(5000);
  const InputTimes times = fill(t);
  ASSERT_EQ(times.size(), t.size());
  const auto decoded = times.decode();
  EXPECT_EQ(std::vector<int64_t>(decoded.begin(), decoded.end()), t);
}

TEST(InputTimes, ReadsInOrderFromAnyEvent) {
  const std::vector<int64_t> t = awkward_times(3000);
  const InputTimes times = fill(t);
  // Around the checkpoints (every 1024 events) and elsewhere.
  for (uint32_t from : {0u, 1u, 1023u, 1024u, 1025u, 2047u, 2048u, 2500u, 2999u}) {
    InputTimes::Reader r(times, from);
    for (uint32_t i = from; i < t.size(); ++i, r.next()) {
      ASSERT_EQ(r.index(), i);
      ASSERT_EQ(r.time(), t[i]) << "from " << from << ", event " << i;
    }
    EXPECT_EQ(r.index(), t.size());
  }
  for (uint32_t i = 0; i < t.size(); i += 97)
    EXPECT_EQ(times.at(i), t[i]);
  InputTimes::Reader r(times, 0);
  r.skip_to(2222);
  EXPECT_EQ(r.time(), t[2222]);
}

TEST(InputTimes, EmptyAndSingle) {
  InputTimes empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(InputTimes::Reader(empty, 0).index(), 0u);
  EXPECT_TRUE(empty.decode().empty());
  InputTimes one;
  one.push_back(-5);
  EXPECT_EQ(one.at(0), -5);
}
