#include "relations/collective_bounds.h"

#include <gtest/gtest.h>

namespace htrace::relations {
namespace {

using format::CollectivePattern;

// Three members on nodes 0, 0, 1 (ranks = processes).
const CollectiveMember kMember[3] = {{0, 0, 0}, {1, 1, 0}, {2, 2, 1}};
const MpiLatencies kLatency{10, 100};

TEST(CollectiveBounds, AllToAllEndWaitsForEveryOtherBeginWithPairLatency) {
  CollectiveBounds b;
  b.pattern = CollectivePattern::AllToAll;
  b.add_input(kMember[0], 1000);
  b.add_input(kMember[1], 2000);
  b.add_input(kMember[2], 1500);
  EXPECT_EQ(b.end_bound(kMember[1], kLatency, true), 1600); // 1500 + inter beats 1000 + intra
  EXPECT_EQ(b.end_bound(kMember[0], kLatency, true), 2010); // own node: intra
  EXPECT_EQ(b.end_bound(kMember[0], MpiLatencies{}, true), 2000);
}

TEST(CollectiveBounds, OneToNWaitsForTheRootOnly) {
  CollectiveBounds b;
  b.pattern = CollectivePattern::OneToN;
  b.root = 2;
  b.add_begin(kMember[0], 5000, 5000);
  b.add_begin(kMember[2], 1000, 900);
  EXPECT_EQ(b.end_bound(kMember[0], kLatency), 1100);
  EXPECT_EQ(b.end_bound(kMember[0], kLatency, true), 1000);
  EXPECT_EQ(b.end_bound(kMember[2], kLatency), kNoTime);
  b.add_end(kMember[0], 3000);
  EXPECT_EQ(b.begin_upper_bound(kMember[2], kLatency), 2900);
}

TEST(CollectiveBounds, PrefixWaitsForLowerRanks) {
  CollectiveBounds b;
  b.pattern = CollectivePattern::Prefix;
  b.add_input(kMember[2], 9000);
  b.add_input(kMember[0], 1000);
  EXPECT_EQ(b.end_bound(kMember[1], kLatency, true), 1010);
  EXPECT_EQ(b.end_bound(kMember[0], kLatency, true), kNoTime);
}

// The begin each end depends on most, and whose it is: what the latencies a trace shows across
// clocks are taken from.
TEST(CollectiveBounds, LatestInputDependencyFollowsThePattern) {
  using Dependency = CollectiveBounds::Dependency;
  const auto is = [](Dependency d, std::int64_t begin, std::uint32_t process) {
    return d.begin == begin && d.process == process;
  };
  CollectiveBounds all;
  all.pattern = CollectivePattern::AllToAll;
  all.add_input(kMember[0], 1000);
  all.add_input(kMember[1], 2000);
  all.add_input(kMember[2], 1500);
  EXPECT_TRUE(is(all.latest_input_dependency(kMember[0]), 2000, 1));
  EXPECT_TRUE(is(all.latest_input_dependency(kMember[1]), 1500, 2)); // the runner-up, not itself
  CollectiveBounds bcast;
  bcast.pattern = CollectivePattern::OneToN;
  bcast.root = 2;
  bcast.add_input(kMember[0], 5000);
  EXPECT_EQ(bcast.latest_input_dependency(kMember[0]).begin, kNoTime); // root not seen yet
  bcast.add_input(kMember[2], 900);
  EXPECT_TRUE(is(bcast.latest_input_dependency(kMember[0]), 900, 2));
  EXPECT_EQ(bcast.latest_input_dependency(kMember[2]).begin, kNoTime);
  CollectiveBounds reduce;
  reduce.pattern = CollectivePattern::NToOne;
  reduce.add_input(kMember[0], 700);
  reduce.add_input(kMember[2], 800);
  EXPECT_TRUE(is(reduce.latest_input_dependency(kMember[0]), 800, 2));
  EXPECT_EQ(reduce.latest_input_dependency(kMember[2]).begin, kNoTime);
  CollectiveBounds scan;
  scan.pattern = CollectivePattern::Prefix;
  scan.add_input(kMember[2], 9000);
  scan.add_input(kMember[0], 1000);
  EXPECT_TRUE(is(scan.latest_input_dependency(kMember[1]), 1000, 0));
  EXPECT_EQ(scan.latest_input_dependency(kMember[0]).begin, kNoTime);
}

TEST(CollectiveNumbering, CountsPerCommunicator) {
  CollectiveNumbering n;
  EXPECT_EQ(n.next(4), 0u);
  EXPECT_EQ(n.next(5), 0u);
  EXPECT_EQ(n.next(4), 1u);
}

} // namespace
} // namespace htrace::relations
