// The lookups readers make per event (relations/p2p_channel.h, member_ranks.h, ref_index.h): each
// must answer as the search or the map it stands for.
#include "relations/member_ranks.h"
#include "relations/p2p_channel.h"
#include "relations/ref_index.h"

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

namespace htrace::relations {
namespace {

TEST(ChannelIndex, NumbersChannelsInFirstSeenOrderThroughGrowth) {
  ChannelIndex index;
  std::map<P2pChannel, std::uint32_t> expected;
  // Channels that differ in one field at a time, enough to grow the table several times.
  for (std::uint32_t i = 0; i < 3000; ++i) {
    const P2pChannel c{i % 50, i / 50, i % 3, i % 7};
    const std::uint32_t n = index.find_or_add(c);
    const auto [it, inserted] =
        expected.try_emplace(c, static_cast<std::uint32_t>(expected.size()));
    EXPECT_EQ(n, it->second) << "channel " << i << (inserted ? " (new)" : " (seen)");
  }
  EXPECT_EQ(index.size(), expected.size());
  for (const auto& [c, n] : expected) {
    EXPECT_EQ(index.find_or_add(c), n);
    EXPECT_EQ(index[n], c);
  }
  EXPECT_EQ(index.size(), expected.size());
}

TEST(ChannelIndex, ChannelsDifferingOnlyInCommOrTagAreDistinct) {
  ChannelIndex index;
  EXPECT_EQ(index.find_or_add({1, 2, 0, 0}), 0u);
  EXPECT_EQ(index.find_or_add({1, 2, 0, 1}), 1u);
  EXPECT_EQ(index.find_or_add({1, 2, 1, 0}), 2u);
  EXPECT_EQ(index.find_or_add({2, 1, 0, 0}), 3u);
  EXPECT_EQ(index.find_or_add({1, 2, 0, 1}), 1u);
}

TEST(MemberRanks, FirstRankWithTheKeyPerCommunicator) {
  MemberRanks ranks;
  // Communicator 7: processes of its ranks; process 4 holds ranks 1 and 3 (two threads).
  const std::vector<std::uint32_t> seven{9, 4, 2, 4};
  const auto key7 = [&](std::size_t r) { return seven[r]; };
  EXPECT_EQ(ranks.rank(7, seven.size(), 4, key7), 1u);
  EXPECT_EQ(ranks.rank(7, seven.size(), 9, key7), 0u);
  EXPECT_EQ(ranks.rank(7, seven.size(), 2, key7), 2u);
  EXPECT_EQ(ranks.rank(7, seven.size(), 5, key7), seven.size()); // not a member
  // Another communicator with the same keys at other ranks.
  const std::vector<std::uint32_t> eight{2, 9};
  const auto key8 = [&](std::size_t r) { return eight[r]; };
  EXPECT_EQ(ranks.rank(8, eight.size(), 9, key8), 1u);
  EXPECT_EQ(ranks.rank(8, eight.size(), 4, key8), eight.size());
  EXPECT_EQ(ranks.rank(7, seven.size(), 2, key7), 2u);
}

TEST(RefIndex, FindsWhatTheMapHolds) {
  // Dense references, one far beyond them (left to the map), gaps.
  std::map<std::uint32_t, std::string> map{
      {0, "zero"}, {1, "one"}, {3, "three"}, {4000000000u, "far"}};
  const RefIndex<std::string> index(map);
  for (const auto& [ref, name] : map) {
    ASSERT_NE(index.find(ref), nullptr) << ref;
    EXPECT_EQ(index.find(ref), &map.at(ref));
  }
  EXPECT_EQ(index.find(2), nullptr);
  EXPECT_EQ(index.find(5), nullptr);
  EXPECT_EQ(index.find(4000000001u), nullptr);
  const std::map<std::uint32_t, std::string> empty;
  EXPECT_EQ(RefIndex<std::string>(empty).find(0), nullptr);
}

TEST(RefSet, HoldsTheMembersOnly) {
  // Members dense and far beyond them, non-members among and after them, gaps.
  std::map<std::uint32_t, bool> map;
  for (const std::uint32_t ref : {1u, 3u, 4000000000u})
    map[ref] = true;
  for (const std::uint32_t ref : {0u, 4u, 4000000002u})
    map[ref] = false;
  const RefSet set(map, [](bool member) { return member; });
  for (const auto& [ref, member] : map)
    EXPECT_EQ(set.contains(ref), member) << ref;
  for (const std::uint32_t absent : {2u, 5u, 1000u, 4000000001u})
    EXPECT_FALSE(set.contains(absent)) << absent;
  const std::map<std::uint32_t, bool> empty;
  EXPECT_FALSE(RefSet(empty, [](bool) { return true; }).contains(0));
}

} // namespace
} // namespace htrace::relations
