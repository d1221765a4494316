// The bulk exchange of message values and the agreement on errors, on simulated correction ranks.
#include "correct/exchange.h"
#include "simulated_ranks.h"

#include <gtest/gtest.h>
#include <mutex>
#include <string>
#include <vector>

using namespace htrace::correct;
using namespace htrace;
using htrace::correct::testing::SimulatedRanks;

namespace {

// What one rank received, in delivery order, as text.
using Received = std::vector<std::string>;

std::string describe(const P2PRun& run) {
  std::string s = "p2p " + std::to_string(run.src) + "->" + std::to_string(run.dst) + " tag " +
                  std::to_string(run.comm_tag) + " from " + std::to_string(run.first) + ":";
  for (size_t i = 0; i < run.count; ++i)
    s += " " + std::to_string(run.values[i]);
  return s;
}

std::string describe(const CollectiveValue& v) {
  return "collective " + std::to_string(v.comm) + "/" + std::to_string(v.sequence) + " of " +
         std::to_string(v.process) + ": " + std::to_string(v.value) + " input " +
         std::to_string(v.input);
}

} // namespace

// Every rank sends each other rank three consecutive messages of one stream (one run), a
// collective value, then the stream's next message (a new run: another record came between).
// Each rank receives the other ranks' records in rank order, each in posting order.
TEST(Exchange, DeliversRunsAndCollectiveValuesInRankOrder) {
  constexpr int kRanks = 3;
  std::vector<Received> received(kRanks);
  std::vector<uint64_t> moved(kRanks);
  SimulatedRanks sim(kRanks);
  const auto errors = sim.run([&](RankGroup& group) {
    const auto me = static_cast<uint32_t>(group.rank());
    std::vector<P2PStream> streams(kRanks);
    Exchange exchange(group);
    for (int to = 0; to < kRanks; ++to) {
      if (to == group.rank()) continue;
      P2PStream& st = streams[static_cast<size_t>(to)];
      st.src = me, st.dst = static_cast<uint64_t>(to), st.comm_tag = 7;
      exchange.reserve(to, 4, 2);
      for (uint64_t seq = 0; seq < 3; ++seq)
        exchange.post(to, st, seq, int64_t(100 * me + seq));
      exchange.post(to, CollectiveValue{2, me, 9, -int64_t(me), 1000 + int64_t(me)});
      exchange.post(to, st, 3, int64_t(100 * me + 3));
    }
    moved[me] = exchange.run();
    exchange.for_each_received(
        [&](const P2PRun& run) { received[me].push_back(describe(run)); },
        [&](const CollectiveValue& v) { received[me].push_back(describe(v)); });
  });
  for (const auto& e : errors)
    EXPECT_FALSE(e);
  EXPECT_EQ(moved, std::vector<uint64_t>(kRanks, 3 * 2 * 5)); // every value on every rank
  EXPECT_EQ(received[1],
            (Received{"p2p 0->1 tag 7 from 0: 0 1 2", "collective 2/9 of 0: 0 input 1000",
                      "p2p 0->1 tag 7 from 3: 3", "p2p 2->1 tag 7 from 0: 200 201 202",
                      "collective 2/9 of 2: -2 input 1002", "p2p 2->1 tag 7 from 3: 203"}));
  EXPECT_EQ(received[0].size(), 6u);
  EXPECT_EQ(received[0][0], "p2p 1->0 tag 7 from 0: 100 101 102");
}

// Nothing posted anywhere: run() moves nothing and says so on every rank.
TEST(Exchange, EmptyRoundMovesNothing) {
  SimulatedRanks sim(2);
  std::vector<uint64_t> moved(2, 1);
  const auto errors = sim.run([&](RankGroup& group) {
    Exchange exchange(group);
    moved[static_cast<size_t>(group.rank())] = exchange.run();
  });
  EXPECT_FALSE(errors[0] || errors[1]);
  EXPECT_EQ(moved, (std::vector<uint64_t>{0, 0}));
}

// Rank 2's priority-0 message wins over rank 0's priority-1 one; every rank throws it, with rank
// 2's kind, marked agreed. Without any message nobody throws.
TEST(Exchange, FailTogetherAgreesOnTheFirstMessage) {
  SimulatedRanks sim(3);
  std::mutex m;
  std::vector<std::string> what(3);
  std::vector<int> kinds(3), agreed(3);
  const auto errors = sim.run([&](RankGroup& group) {
    check_together(group, ""); // nobody has a message: returns everywhere
    const int r = group.rank();
    try {
      check_together(group,
                     r == 0   ? "late"
                     : r == 2 ? "first"
                              : "",
                     r == 0 ? 1 : 0, r == 2 ? ErrorKind::Output : ErrorKind::Input);
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(m);
      what[size_t(r)] = e.what(), kinds[size_t(r)] = e.exit_code(), agreed[size_t(r)] = e.agreed();
    }
  });
  for (const auto& e : errors)
    EXPECT_FALSE(e);
  EXPECT_EQ(what, std::vector<std::string>(3, "first"));
  EXPECT_EQ(kinds, std::vector<int>(3, kExitOutput));
  EXPECT_EQ(agreed, std::vector<int>(3, 1));
}
