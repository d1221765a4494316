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

TEST(CollectiveNumbering, CountsPerCommunicator) {
  CollectiveNumbering n;
  EXPECT_EQ(n.next(4), 0u);
  EXPECT_EQ(n.next(5), 0u);
  EXPECT_EQ(n.next(4), 1u);
}

} // namespace
} // namespace htrace::relations
