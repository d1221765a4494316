#include "relations/collective_calls.h"

#include <gtest/gtest.h>
#include <vector>

namespace htrace::relations {
namespace {

struct Collect {
  std::vector<CollectiveCall>* out;
  void operator()(const CollectiveCall& c) const { out->push_back(c); }
};

TEST(CollectiveCalls, BlockingCallsPairBeginWithEnd) {
  CollectiveCalls calls;
  std::vector<CollectiveCall> out;
  calls.begin(1, false);
  calls.end(2, 3, 7, 0, 8, Collect{&out});
  calls.end(5, 3, 7, 0, 0, Collect{&out}); // an end without its begin begins there
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].begin, 1);
  EXPECT_EQ(out[0].end, 2);
  EXPECT_EQ(out[0].comm, 7u);
  EXPECT_EQ(out[0].received, 8u);
  EXPECT_EQ(out[1].begin, 5);
  EXPECT_EQ(out[1].end, 5);
}

TEST(CollectiveCalls, HandedOutInBeginOrder) {
  CollectiveCalls calls;
  std::vector<CollectiveCall> out;
  calls.request(1, 100, false);
  calls.request(2, 200, false);
  calls.complete(3, 0, 1, 0, 0, 200, Collect{&out});
  EXPECT_TRUE(out.empty()); // waits for the call begun first
  calls.complete(4, 0, 2, 0, 0, 100, Collect{&out});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].begin, 1);
  EXPECT_EQ(out[0].comm, 2u);
  EXPECT_EQ(out[1].begin, 2);
  EXPECT_EQ(out[1].comm, 1u);
}

TEST(CollectiveCalls, RequestInsideBlockingCallSortsAfterIt) {
  CollectiveCalls calls;
  std::vector<CollectiveCall> out;
  calls.begin(1, false);
  calls.request(2, 9, false);
  calls.complete(3, 0, 5, 0, 0, 9, Collect{&out});
  calls.end(4, 0, 6, 0, 0, Collect{&out});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].comm, 6u);
  EXPECT_EQ(out[1].comm, 5u);
}

TEST(CollectiveCalls, NeverCompletedCallNumbersNothing) {
  CollectiveCalls calls;
  std::vector<CollectiveCall> out;
  calls.request(1, 9, false); // never completed
  calls.begin(2, false);
  calls.end(3, 0, 4, 0, 0, Collect{&out});
  EXPECT_TRUE(out.empty());
  calls.finish(Collect{&out});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].begin, 2);
}

TEST(CollectiveCalls, ReopenedRequestAbandonsTheEarlierCall) {
  CollectiveCalls calls;
  std::vector<CollectiveCall> out;
  calls.request(1, 9, false);
  calls.request(2, 9, false);
  calls.complete(3, 0, 4, 0, 0, 9, Collect{&out});
  calls.finish(Collect{&out});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].begin, 2);
}

TEST(CollectiveCalls, NeighborhoodCollectivesCarryNoRelation) {
  CollectiveCalls calls;
  std::vector<CollectiveCall> out;
  calls.begin(1, true);
  calls.end(2, 0, 4, 0, 0, Collect{&out});
  calls.request(3, 9, true);
  calls.complete(4, 0, 4, 0, 0, 9, Collect{&out});
  calls.begin(5, false);
  calls.end(6, 0, 4, 0, 0, Collect{&out});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].begin, 5);
}

} // namespace
} // namespace htrace::relations
