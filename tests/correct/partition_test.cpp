// Correction ranks get contiguous blocks of processes with about equal event counts.
#include "correct/partition.h"

#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <vector>

using htrace::correct::assign_processes;

namespace {

std::vector<uint64_t> load_per_rank(const std::vector<uint64_t>& events,
                                    const std::vector<int>& owner, int ranks) {
  std::vector<uint64_t> load(static_cast<size_t>(ranks));
  for (size_t i = 0; i < events.size(); ++i)
    load[static_cast<size_t>(owner[i])] += events[i];
  return load;
}

TEST(Partition, NearEqualProcessesSplitEvenly) {
  // The event counts of Debian's hpcc traced at four ranks (the correction benchmark): the first
  // two processes are a little smaller than the last two.
  const std::vector<uint64_t> events = {4424824, 4419422, 4425045, 4465575};
  EXPECT_EQ(assign_processes(events, 2), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(assign_processes(events, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(assign_processes(events, 1), (std::vector<int>{0, 0, 0, 0}));
}

TEST(Partition, BlocksAreContiguousAndNoRankCarriesMoreThanItsShareAndOneProcess) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const size_t processes = 1 + rng() % 40;
    const int ranks = 1 + static_cast<int>(rng() % 8);
    std::vector<uint64_t> events(processes);
    for (uint64_t& e : events)
      e = rng() % 4 == 0 ? 0 : rng() % 1000000;
    const std::vector<int> owner = assign_processes(events, ranks);
    ASSERT_EQ(owner.size(), processes);
    EXPECT_TRUE(std::is_sorted(owner.begin(), owner.end()));
    EXPECT_GE(owner.front(), 0);
    EXPECT_LT(owner.back(), ranks);
    uint64_t total = 0, largest = 0;
    for (uint64_t e : events)
      total += e + 1, largest = std::max(largest, e + 1);
    for (uint64_t load : load_per_rank(events, owner, ranks))
      EXPECT_LE(load, total / static_cast<uint64_t>(ranks) + largest) << "round " << round;
  }
}

TEST(Partition, MoreRanksThanProcessesAndHugeCounts) {
  EXPECT_EQ(assign_processes({10, 10}, 8), (std::vector<int>{2, 6}));
  EXPECT_TRUE(assign_processes({}, 3).empty());
  const uint64_t huge = std::numeric_limits<uint64_t>::max() / 4;
  EXPECT_EQ(assign_processes({huge, huge, huge, huge}, 1024),
            (std::vector<int>{128, 384, 640, 896}));
}

} // namespace
