#include "relations/location_channels.h"
#include "relations/p2p_messages.h"

#include <gtest/gtest.h>
#include <vector>

namespace htrace::relations {
namespace {

using End = MessageEnd<int>;

struct Collect {
  std::vector<End>* out;
  void operator()(const End& e) const { out->push_back(e); }
};

const P2pChannel kFromTwo{2, 0, 1, 3};

TEST(PostedMessages, ReceivesInPostingOrderNotCompletionOrder) {
  PostedMessages<int> loc;
  std::vector<End> out;
  loc.irecv_request(11);
  loc.irecv_request(12);
  loc.irecv(kFromTwo, 2, 12, Collect{&out}); // the second posted completes first
  EXPECT_TRUE(out.empty());                  // held until the first posted is resolved
  loc.irecv(kFromTwo, 1, 11, Collect{&out});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].what, 1);
  EXPECT_EQ(out[1].what, 2);
  EXPECT_EQ(out[0].side, P2pSide::Receive);
}

TEST(PostedMessages, BlockingReceiveTakesItsPlaceAtItsRecord) {
  PostedMessages<int> loc;
  std::vector<End> out;
  loc.irecv_request(11);
  loc.recv(kFromTwo, 2, Collect{&out}); // posted after the Irecv
  loc.irecv(kFromTwo, 1, 11, Collect{&out});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].what, 1);
  EXPECT_EQ(out[1].what, 2);
}

TEST(PostedMessages, CancelledSendNumbersNothing) {
  PostedMessages<int> loc;
  std::vector<End> out;
  const P2pChannel to_zero{2, 0, 1, 5};
  loc.isend(to_zero, 1, 77, Collect{&out});
  loc.send(to_zero, 2, Collect{&out}); // held behind the open Isend
  EXPECT_TRUE(out.empty());
  loc.cancelled(77, Collect{&out});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].what, 2);
  EXPECT_EQ(out[0].side, P2pSide::Send);
}

TEST(PostedMessages, IsendNeverCompletedCountsAtFinish) {
  PostedMessages<int> loc;
  std::vector<End> out;
  loc.isend(kFromTwo, 1, 5, Collect{&out});
  loc.irecv_request(6); // never completed: numbers nothing
  loc.recv(kFromTwo, 2, Collect{&out});
  EXPECT_TRUE(out.empty());
  loc.finish(Collect{&out});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].what, 1);
  EXPECT_EQ(out[1].what, 2);
}

TEST(PostedMessages, IrecvWithoutRequestRecordIsPostedAtCompletion) {
  PostedMessages<int> loc;
  std::vector<End> out;
  loc.irecv(kFromTwo, 1, 9, Collect{&out});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].channel, kFromTwo);
}

TEST(ChannelNumbers, KthSendPairsWithKthReceive) {
  ChannelNumbers numbers(3); // location = rank
  const P2pChannel other{1, 0, 1, 3};
  const auto s0 = numbers.number(kFromTwo.src, End{P2pSide::Send, kFromTwo, 0});
  const auto s1 = numbers.number(kFromTwo.src, End{P2pSide::Send, kFromTwo, 0});
  const auto o0 = numbers.number(other.src, End{P2pSide::Send, other, 0});
  const auto s2 = numbers.number(kFromTwo.src, End{P2pSide::Send, kFromTwo, 0}); // (after another)
  const auto r0 = numbers.number(kFromTwo.dst, End{P2pSide::Receive, kFromTwo, 0});
  const auto r1 = numbers.number(kFromTwo.dst, End{P2pSide::Receive, kFromTwo, 0});
  EXPECT_EQ(s0.channel, r0.channel);
  EXPECT_EQ(s0.k, 0u);
  EXPECT_EQ(r1.k, s1.k);
  EXPECT_EQ(s1.k, 1u);
  EXPECT_NE(o0.channel, s0.channel);
  EXPECT_EQ(s2.channel, s0.channel);
  EXPECT_EQ(s2.k, 2u);
}

} // namespace
} // namespace htrace::relations
