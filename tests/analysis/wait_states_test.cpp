// The wait-state analysis fed by hand: the orders a streaming reader may see the events in, and
// the runs a truncated or unusual archive holds (the archive tests cover the patterns).
#include "analysis/wait_states.h"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <otf2/OTF2_Events.h>
#include <string>
#include <tuple>
#include <vector>

namespace htrace::analysis {
namespace {

constexpr std::uint32_t kWorld = 0;
constexpr std::uint64_t kBlocking = kBlockingRequest;
// Regions.
constexpr std::uint32_t kMain = 0, kSend = 1, kRecv = 2, kSendrecv = 3, kBarrier = 4, kSsend = 5;

RunLayout two_ranks(std::uint32_t ranks = 2) {
  RunLayout l;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    l.process_of.push_back(r);
    l.comm_members[kWorld].push_back(r);
  }
  auto mpi = [](const char* name) {
    format::RegionDef d;
    d.name = name;
    d.cls.paradigm = OTF2_PARADIGM_MPI;
    return d;
  };
  l.regions[kMain] = format::RegionDef{"main", {}};
  l.regions[kSend] = mpi("MPI_Send");
  l.regions[kRecv] = mpi("MPI_Recv");
  l.regions[kSendrecv] = mpi("MPI_Sendrecv");
  l.regions[kBarrier] = mpi("MPI_Barrier");
  l.regions[kSsend] = mpi("MPI_Ssend");
  return l;
}

const PatternTime& of(const WaitStates& w, WaitPattern p) {
  return w[p];
}

// The send is seen only after the receive call has left (the sender's clock is behind): the
// receive call is held until its partner is known, then bounded by its duration.
TEST(WaitStates, PartnerSeenAfterTheWaitingCallLeft) {
  WaitStateAnalysis a(two_ranks());
  a.enter(0, 100, kRecv);
  a.recv(0, 150, kWorld, 1, 7, kBlocking);
  a.leave(0, 150);
  a.enter(1, 130, kSend);
  a.send(1, kWorld, 0, 7, kBlocking);
  a.leave(1, 131);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 30);
  EXPECT_EQ(of(w, WaitPattern::LateSender).caused_by[1], 30);
  EXPECT_EQ(of(w, WaitPattern::LateSender).by_region.at(kRecv), 30);
}

// Calls nested deeper than a location keeps frames in place (two) are found as the calls their
// records are in, and the frames below stay intact.
TEST(WaitStates, CallsNestedDeeperThanKeptInPlace) {
  WaitStateAnalysis a(two_ranks());
  for (int depth = 0; depth < 3; ++depth)
    a.enter(0, 0, kMain);
  a.enter(1, 0, kMain);
  a.enter(0, 100, kSendrecv); // the fourth frame
  a.send(0, kWorld, 1, 1, kBlocking);
  a.recv(0, 149, kWorld, 1, 2, kBlocking);
  a.enter(1, 130, kSend);
  a.send(1, kWorld, 0, 2, kBlocking);
  a.leave(1, 131);
  a.leave(0, 150);
  a.enter(1, 160, kRecv);
  a.recv(1, 169, kWorld, 0, 1, kBlocking);
  a.leave(1, 170);
  a.leave(0, 180);
  a.leave(0, 190);
  a.enter(0, 200, kRecv); // the second frame again
  a.recv(0, 239, kWorld, 1, 3, kBlocking);
  a.enter(1, 230, kSend);
  a.send(1, kWorld, 0, 3, kBlocking);
  a.leave(1, 231);
  a.leave(0, 240);
  const WaitStates w = a.finish();
  const PatternTime& late = of(w, WaitPattern::LateSender);
  EXPECT_EQ(late.total_ns, 60);
  EXPECT_EQ(late.calls, 2u);
  EXPECT_EQ(late.by_region.at(kSendrecv), 30);
  EXPECT_EQ(late.by_region.at(kRecv), 30);
  EXPECT_EQ(late.by_location[0], 60);
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).total_ns, 0); // its receive was posted after 150
}

// Late Sender, wrong order: only a message to the waiting process that was sent before the late
// one and is received after it counts; a cancelled Isend never arrives, one received first is in
// order, one sent after the late one does not count.
TEST(WaitStates, WrongOrderNeedsAnEarlierMessageReceivedLater) {
  WaitStateAnalysis a(two_ranks(3));
  auto send = [&](std::uint32_t loc, std::int64_t t, std::uint32_t to, std::uint32_t tag) {
    a.enter(loc, t, kSend);
    a.send(loc, kWorld, to, tag, kBlocking);
    a.leave(loc, t + 1);
  };
  auto recv = [&](std::int64_t t, std::uint32_t from, std::uint32_t tag, std::int64_t left) {
    a.enter(0, t, kRecv);
    a.recv(0, left, kWorld, from, tag, kBlocking);
    a.leave(0, left);
  };
  a.enter(2, 10, kSend); // an Isend to rank 0, cancelled
  a.send(2, kWorld, 0, 9, 5);
  a.leave(2, 11);
  a.enter(2, 12, kSend);
  a.request_cancelled(2, 5);
  a.leave(2, 13);
  a.enter(0, 20, kRecv);
  a.recv(0, 100, kWorld, 1, 8, kBlocking);
  send(1, 60, 0, 8);
  a.leave(0, 100); // Late Sender 40, not wrong order
  send(2, 110, 0, 9);
  recv(120, 2, 9, 121);
  a.enter(0, 130, kRecv);
  a.recv(0, 200, kWorld, 1, 8, kBlocking);
  a.enter(1, 170, kSend);
  send(2, 175, 0, 9); // in flight, but sent after the late message
  a.send(1, kWorld, 0, 8, kBlocking);
  a.leave(1, 180);
  a.leave(0, 200); // 40, rank 2's earlier message was received first
  recv(205, 2, 9, 206);
  send(2, 210, 0, 9);
  a.enter(0, 220, kRecv);
  a.recv(0, 300, kWorld, 1, 8, kBlocking);
  send(1, 250, 0, 8);
  a.leave(0, 300); // 30, wrong order: rank 2's message from 210 is received after it
  recv(310, 2, 9, 311);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 110);
  const PatternTime& wo = of(w, WaitPattern::LateSenderWrongOrder);
  EXPECT_EQ(wo.total_ns, 30);
  EXPECT_EQ(wo.calls, 1u);
  EXPECT_EQ(wo.caused_by[1], 30);
  EXPECT_EQ(wo.by_location[0], 30);
}

// One location's record: when it happens and what it feeds.
struct Record {
  std::uint32_t loc;
  std::int64_t t;
  std::function<void(WaitStateAnalysis&)> feed;
};

// `records` by time, ties in their order.
std::vector<Record> by_time(std::vector<Record> records) {
  std::stable_sort(records.begin(), records.end(),
                   [](const Record& x, const Record& y) { return x.t < y.t; });
  return records;
}

// Feeds `records` in time order, each time announced first.
void feed_in_time_order(WaitStateAnalysis& a, const std::vector<Record>& records) {
  a.read_in_time_order();
  for (const Record& r : by_time(records)) {
    a.advance(r.t);
    r.feed(a);
  }
}

// Feeds `records` location after location, in the order of `locations`.
void feed_by_location(WaitStateAnalysis& a, const std::vector<Record>& records,
                      const std::vector<std::uint32_t>& locations) {
  for (const std::uint32_t loc : locations)
    for (const Record& r : records)
      if (r.loc == loc) r.feed(a);
}

// Wrong order needs every message sent before the late one, read in whatever order. Rank 2 enters
// MPI_Send at 50 but records its send only at 150, after rank 0 received rank 1's late message
// (sent at 100) at 130; rank 2's message is received after that: the late receive was in wrong
// order, whether the locations are read in time order, window by window or one after another.
TEST(WaitStates, WrongOrderTheSameInEveryReadingOrder) {
  const std::vector<Record> records = {
      {0, 20, [](WaitStateAnalysis& a) { a.enter(0, 20, kRecv); }},
      {0, 130, [](WaitStateAnalysis& a) { a.recv(0, 130, kWorld, 1, 8, kBlocking); }},
      {0, 130, [](WaitStateAnalysis& a) { a.leave(0, 130); }},
      {0, 190, [](WaitStateAnalysis& a) { a.enter(0, 190, kRecv); }},
      {0, 200, [](WaitStateAnalysis& a) { a.recv(0, 200, kWorld, 2, 9, kBlocking); }},
      {0, 200, [](WaitStateAnalysis& a) { a.leave(0, 200); }},
      {1, 100, [](WaitStateAnalysis& a) { a.enter(1, 100, kSend); }},
      {1, 100, [](WaitStateAnalysis& a) { a.send(1, kWorld, 0, 8, kBlocking); }},
      {1, 101, [](WaitStateAnalysis& a) { a.leave(1, 101); }},
      {2, 50, [](WaitStateAnalysis& a) { a.enter(2, 50, kSend); }},
      {2, 150, [](WaitStateAnalysis& a) { a.send(2, kWorld, 0, 9, kBlocking); }},
      {2, 151, [](WaitStateAnalysis& a) { a.leave(2, 151); }},
  };
  auto check = [](WaitStateAnalysis& a, const char* order) {
    const WaitStates w = a.finish();
    EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 80) << order;
    EXPECT_EQ(of(w, WaitPattern::LateSenderWrongOrder).total_ns, 80) << order;
    EXPECT_EQ(of(w, WaitPattern::LateSenderWrongOrder).caused_by[1], 80) << order;
  };
  {
    WaitStateAnalysis a(two_ranks(3));
    feed_in_time_order(a, records);
    check(a, "time order");
  }
  for (const std::int64_t width : {40, 100, 1000}) {
    WaitStateAnalysis a(two_ranks(3));
    for (std::int64_t end = width; end < 300 + width; end += width) {
      for (const Record& r : records)
        if (r.t >= end - width && r.t < end) r.feed(a);
      a.advance(end);
    }
    check(a, "windows");
  }
  for (const bool backwards : {false, true}) {
    WaitStateAnalysis a(two_ranks(3));
    feed_by_location(a, records,
                     backwards ? std::vector<std::uint32_t>{2, 1, 0}
                               : std::vector<std::uint32_t>{0, 1, 2});
    check(a, backwards ? "locations backwards" : "locations in turn");
  }
}

// Two late senders entering at once, whose receives complete in one call: the wait is the lower
// location's whatever order the records come in.
TEST(WaitStates, EqualWaitsGoToTheLowerLocationInEveryReadingOrder) {
  const std::vector<Record> records = {
      {0, 10, [](WaitStateAnalysis& a) { a.enter(0, 10, kRecv); }},
      {0, 100, [](WaitStateAnalysis& a) { a.recv(0, 100, kWorld, 2, 7, kBlocking); }},
      {0, 100, [](WaitStateAnalysis& a) { a.recv(0, 100, kWorld, 1, 7, kBlocking); }},
      {0, 110, [](WaitStateAnalysis& a) { a.leave(0, 110); }},
      {1, 60, [](WaitStateAnalysis& a) { a.enter(1, 60, kSend); }},
      {1, 60, [](WaitStateAnalysis& a) { a.send(1, kWorld, 0, 7, kBlocking); }},
      {1, 61, [](WaitStateAnalysis& a) { a.leave(1, 61); }},
      {2, 60, [](WaitStateAnalysis& a) { a.enter(2, 60, kSend); }},
      {2, 60, [](WaitStateAnalysis& a) { a.send(2, kWorld, 0, 7, kBlocking); }},
      {2, 61, [](WaitStateAnalysis& a) { a.leave(2, 61); }},
  };
  auto check = [](WaitStateAnalysis& a, const std::string& order) {
    const WaitStates w = a.finish();
    EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 50) << order;
    EXPECT_EQ(of(w, WaitPattern::LateSender).caused_by[1], 50) << order;
    EXPECT_EQ(of(w, WaitPattern::LateSender).caused_by[2], 0) << order;
  };
  {
    WaitStateAnalysis a(two_ranks(3));
    feed_in_time_order(a, records);
    check(a, "time order");
  }
  for (const std::vector<std::uint32_t>& order :
       std::vector<std::vector<std::uint32_t>>{{0, 1, 2}, {0, 2, 1}, {2, 1, 0}, {1, 2, 0}}) {
    WaitStateAnalysis a(two_ranks(3));
    feed_by_location(a, records, order);
    check(a, "locations " + std::to_string(order[0]) + std::to_string(order[1]) +
                 std::to_string(order[2]));
  }
}

// Many calls held at once on several locations and settled in another order than they were held:
// four ranks in a ring exchange by MPI_Sendrecv fifty times, rank 0 entering each exchange 100 ns
// after the others. Read in time order and location after location (backwards, every call of a
// location waits for partners read later): each call gets its own waits, once.
TEST(WaitStates, ManyCallsHeldAtOnceEachGetsItsOwnWaits) {
  constexpr std::uint32_t kRanks = 4;
  constexpr std::int64_t kExchanges = 50;
  std::vector<Record> records;
  for (std::uint32_t r = 0; r < kRanks; ++r)
    for (std::int64_t i = 0; i < kExchanges; ++i) {
      const std::int64_t enter = 1000 * i + (r == 0 ? 100 : 0), leave = 1000 * i + 200;
      const std::uint32_t right = (r + 1) % kRanks, left = (r + kRanks - 1) % kRanks;
      records.push_back({r, enter, [=](WaitStateAnalysis& a) {
                           a.enter(r, enter, kSendrecv);
                           a.send(r, kWorld, right, 1, kBlocking);
                         }});
      records.push_back({r, leave, [=](WaitStateAnalysis& a) {
                           a.recv(r, leave, kWorld, left, 1, kBlocking);
                           a.leave(r, leave);
                         }});
    }
  // Rank 1 waits 100 ns for rank 0's send (Late Sender), rank 3's send 100 ns for rank 0's
  // receive (Late Receiver), in every exchange; no other call waits.
  std::vector<std::tuple<std::uint32_t, std::int64_t, WaitPattern>> expected;
  for (std::int64_t i = 0; i < kExchanges; ++i) {
    expected.emplace_back(1, 1000 * i, WaitPattern::LateSender);
    expected.emplace_back(3, 1000 * i, WaitPattern::LateReceiver);
  }
  std::sort(expected.begin(), expected.end());
  auto run = [&](const std::vector<Record>& order, bool time_order, const char* name) {
    WaitStateAnalysis a(two_ranks(kRanks));
    std::vector<std::tuple<std::uint32_t, std::int64_t, WaitPattern>> seen;
    a.on_wait([&](const WaitStateAnalysis::CallWait& w) {
      EXPECT_EQ(w.wait_ns, 100) << name;
      EXPECT_EQ(w.cause, 0u) << name;
      seen.emplace_back(w.loc, w.enter, w.pattern);
    });
    if (time_order) a.read_in_time_order();
    for (const Record& r : order) {
      if (time_order) a.advance(r.t);
      r.feed(a);
    }
    const WaitStates w = a.finish();
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, expected) << name;
    for (const WaitPattern p : {WaitPattern::LateSender, WaitPattern::LateReceiver}) {
      EXPECT_EQ(of(w, p).total_ns, 100 * kExchanges) << name;
      EXPECT_EQ(of(w, p).calls, static_cast<std::uint64_t>(kExchanges)) << name;
      EXPECT_EQ(of(w, p).caused_by[0], 100 * kExchanges) << name;
    }
    EXPECT_EQ(of(w, WaitPattern::LateSender).by_location[1], 100 * kExchanges) << name;
    EXPECT_EQ(of(w, WaitPattern::LateReceiver).by_location[3], 100 * kExchanges) << name;
    EXPECT_EQ(of(w, WaitPattern::LateSenderWrongOrder).total_ns, 0) << name;
  };
  run(by_time(records), true, "time order");
  run(records, false, "locations in turn");
  std::vector<Record> backwards;
  for (std::uint32_t r = kRanks; r-- > 0;)
    for (const Record& rec : records)
      if (rec.loc == r) backwards.push_back(rec);
  run(backwards, false, "locations backwards");
}

// A location whose trace ends inside MPI_Send, before its send record, holds back the wrong-order
// decisions (and the calls waiting for them) only for a while: not to the end of the run.
TEST(WaitStates, AnUnfinishedSendHoldsNoDecisionForever) {
  WaitStateAnalysis a(two_ranks(3));
  a.read_in_time_order();
  std::size_t decided = 0;
  a.on_call_wait([&](std::uint32_t, std::int64_t, std::int64_t) { ++decided; });
  a.enter(2, 0, kSend); // never records its send, never leaves
  for (std::int64_t i = 0; i < 1000; ++i) {
    const std::int64_t t = 10 + 100 * i;
    a.enter(0, t, kRecv);
    a.enter(1, t + 50, kSend);
    a.send(1, kWorld, 0, 0, kBlocking);
    a.leave(1, t + 51);
    a.recv(0, t + 60, kWorld, 1, 0, kBlocking);
    a.leave(0, t + 60);
    a.advance(t + 61);
  }
  EXPECT_GT(decided, 900u) << "Late Sender calls still held";
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 50 * 1000);
}

// A receive recorded before the late one but matched after it (posting order holds it behind an
// earlier-posted receive) took the message sent earlier first: in order.
TEST(WaitStates, WrongOrderAfterEarlierReceivesAreMatched) {
  WaitStateAnalysis a(two_ranks(3));
  a.enter(0, 0, kRecv);
  a.irecv_request(0, 1); // from rank 1, completed last
  a.leave(0, 1);
  a.enter(0, 2, kRecv);
  a.irecv_request(0, 2); // from rank 2, completed first
  a.leave(0, 3);
  a.enter(2, 10, kSend);
  a.send(2, kWorld, 0, 2, kBlocking);
  a.leave(2, 11);
  a.enter(0, 20, kRecv);
  a.recv(0, 99, kWorld, 2, 2, 2);
  a.enter(1, 50, kSend);
  a.send(1, kWorld, 0, 1, kBlocking);
  a.leave(1, 51);
  a.recv(0, 100, kWorld, 1, 1, 1);
  a.leave(0, 100);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 30);
  EXPECT_EQ(of(w, WaitPattern::LateSenderWrongOrder).total_ns, 0);
}

// A wait never exceeds the call: the send entered 500 ns after the receive left.
TEST(WaitStates, WaitBoundedByTheCall) {
  WaitStateAnalysis a(two_ranks());
  a.enter(0, 100, kRecv);
  a.recv(0, 140, kWorld, 1, 7, kBlocking);
  a.leave(0, 140);
  a.enter(1, 640, kSend);
  a.send(1, kWorld, 0, 7, kBlocking);
  a.leave(1, 650);
  EXPECT_EQ(of(a.finish(), WaitPattern::LateSender).total_ns, 40);
}

// Rank 0's MPI_Sendrecv over [0, 100] and rank 1's over [60, 110], each sending to the other.
void exchange_by_sendrecv(WaitStateAnalysis& a) {
  a.enter(0, 0, kSendrecv);
  a.send(0, kWorld, 1, 1, kBlocking);
  a.recv(0, 100, kWorld, 1, 2, kBlocking);
  a.leave(0, 100);
  a.enter(1, 60, kSendrecv);
  a.send(1, kWorld, 0, 2, kBlocking);
  a.recv(1, 110, kWorld, 0, 1, kBlocking);
  a.leave(1, 110);
}

// MPI_Sendrecv holds a send and a receive: Late Sender for its receive, Late Receiver for its
// send if it blocked until the partner's receive was posted; each bounded by the one call.
TEST(WaitStates, SendrecvWaitsForBothPartners) {
  WaitStateAnalysis a(two_ranks());
  exchange_by_sendrecv(a);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateSender).by_location[0], 60);
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).by_location[0], 60);
  EXPECT_EQ(of(w, WaitPattern::LateSender).by_location[1], 0);
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).by_location[1], 0);
}

// on_wait reports each pattern of a call on its own, with the call's enter and region and the
// location waited for, as the totals count it.
TEST(WaitStates, EachWaitOfACallObserved) {
  WaitStateAnalysis a(two_ranks());
  std::vector<WaitStateAnalysis::CallWait> seen;
  a.on_wait([&](const WaitStateAnalysis::CallWait& w) { seen.push_back(w); });
  exchange_by_sendrecv(a);
  a.finish();
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& w : seen) {
    EXPECT_EQ(w.loc, 0u);
    EXPECT_EQ(w.region, kSendrecv);
    EXPECT_EQ(w.enter, 0);
    EXPECT_EQ(w.wait_ns, 60);
    EXPECT_EQ(w.cause, 1u);
  }
  EXPECT_NE(seen[0].pattern, seen[1].pattern);
}

// A call's waits are observed in pattern order, whichever partner came first (the HTML report
// lists them so): here rank 1 records its receive before its send, so rank 0's Sendrecv learns
// its Late Receiver wait before its Late Sender wait.
TEST(WaitStates, ACallsWaitsObservedInPatternOrder) {
  WaitStateAnalysis a(two_ranks());
  std::vector<WaitPattern> seen;
  a.on_wait([&](const WaitStateAnalysis::CallWait& w) { seen.push_back(w.pattern); });
  a.enter(0, 0, kSendrecv);
  a.send(0, kWorld, 1, 1, kBlocking);
  a.recv(0, 100, kWorld, 1, 2, kBlocking);
  a.leave(0, 100);
  a.enter(1, 60, kSendrecv);
  a.recv(1, 110, kWorld, 0, 1, kBlocking);
  a.send(1, kWorld, 0, 2, kBlocking);
  a.leave(1, 110);
  a.finish();
  EXPECT_EQ(seen, (std::vector<WaitPattern>{WaitPattern::LateSender, WaitPattern::LateReceiver}));
}

// Records outside any MPI call (a hand-written archive) take part in matching but wait for
// nothing: the next message on the channel still pairs with the next receive.
TEST(WaitStates, RecordsOutsideMpiCallsKeepTheMatching) {
  WaitStateAnalysis a(two_ranks());
  a.enter(0, 0, kMain);
  a.recv(0, 5, kWorld, 1, 7, kBlocking); // the first message, outside a call
  a.enter(0, 10, kRecv);
  a.recv(0, 90, kWorld, 1, 7, kBlocking); // the second
  a.leave(0, 90);
  a.enter(1, 0, kMain);
  a.send(1, kWorld, 0, 7, kBlocking); // the first send, outside a call
  a.enter(1, 50, kSend);
  a.send(1, kWorld, 0, 7, kBlocking);
  a.leave(1, 51);
  EXPECT_EQ(of(a.finish(), WaitPattern::LateSender).total_ns, 40);
}

// A truncated run: a call never left and an instance a member never reached wait for nothing,
// and what was complete is still counted.
TEST(WaitStates, TruncatedRunCountsWhatIsComplete) {
  WaitStateAnalysis a(two_ranks(3));
  for (std::uint32_t r = 0; r < 3; ++r) {
    a.enter(r, 10 * r, kBarrier);
    a.collective_begin(r);
    a.collective_end(r, OTF2_COLLECTIVE_OP_BARRIER, kWorld, UINT32_MAX, 0);
    a.leave(r, 30);
  }
  a.enter(0, 40, kBarrier); // rank 1 and 2 never reach the second barrier
  a.collective_begin(0);
  a.collective_end(0, OTF2_COLLECTIVE_OP_BARRIER, kWorld, UINT32_MAX, 0);
  a.leave(0, 90);
  a.enter(1, 40, kRecv); // never left
  a.recv(1, 40, kWorld, 2, 0, kBlocking);
  a.enter(2, 70, kSend);
  a.send(2, kWorld, 1, 0, kBlocking);
  a.leave(2, 71);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::WaitAtBarrier).total_ns, 20 + 10);
  EXPECT_EQ(of(w, WaitPattern::WaitAtBarrier).caused_by[2], 30);
  EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 0);
}

// A synchronous send waits for its receiver whatever its length; a standard one only if it left
// after the receive was posted.
TEST(WaitStates, LateReceiverNeedsASendThatBlocked) {
  WaitStateAnalysis a(two_ranks());
  a.enter(0, 0, kSsend);
  a.send(0, kWorld, 1, 1, kBlocking);
  a.leave(0, 20); // returned before the receive was posted: a violated clock condition
  a.enter(0, 100, kSend);
  a.send(0, kWorld, 1, 2, kBlocking);
  a.leave(0, 110); // returned before the receive was posted: buffered, no wait
  a.enter(1, 50, kRecv);
  a.recv(1, 60, kWorld, 0, 1, kBlocking);
  a.leave(1, 60);
  a.enter(1, 150, kRecv);
  a.recv(1, 160, kWorld, 0, 2, kBlocking);
  a.leave(1, 160);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).total_ns, 20);
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).by_region.at(kSsend), 20);
}

// OpenMP: one process of three threads in team communicator kTeam (layout of its own).
constexpr std::uint32_t kTeam = 9;
constexpr std::uint32_t kOmpBarrier = 10, kOmpImplicit = 11, kSetLock = 12, kCritical = 13;

RunLayout three_threads() {
  RunLayout l;
  for (std::uint32_t t = 0; t < 3; ++t) {
    l.process_of.push_back(0);
    l.comm_members[kTeam].push_back(t);
  }
  auto omp = [](const char* name, OTF2_RegionRole role) {
    format::RegionDef d;
    d.name = name;
    d.cls = format::RegionClass::of(name, role, OTF2_PARADIGM_OPENMP);
    return d;
  };
  l.regions[kMain] = format::RegionDef{"main", {}};
  l.regions[kOmpBarrier] = omp("!$omp barrier", OTF2_REGION_ROLE_BARRIER);
  l.regions[kOmpImplicit] = omp("!$omp implicit barrier", OTF2_REGION_ROLE_IMPLICIT_BARRIER);
  l.regions[kSetLock] = omp("omp_set_lock", OTF2_REGION_ROLE_FUNCTION);
  l.regions[kCritical] = omp("!$omp critical", OTF2_REGION_ROLE_CRITICAL);
  return l;
}

// Thread by thread, as a reader per location hands them out: the barrier is decided once the
// last member left it, whichever thread that is.
TEST(WaitStates, OpenMpBarrierThreadByThread) {
  WaitStateAnalysis a(three_threads());
  std::vector<WaitStateAnalysis::CallWait> seen;
  a.on_wait([&](const WaitStateAnalysis::CallWait& w) { seen.push_back(w); });
  const std::int64_t enters[] = {100, 140, 120};
  a.thread_fork(0, 10);
  for (std::uint32_t t = 0; t < 3; ++t) {
    a.team_begin(t, 20, kTeam);
    a.enter(t, enters[t], kOmpBarrier);
    a.leave(t, 150);
    a.enter(t, 200, kOmpImplicit); // the second instance: nobody waits
    a.leave(t, 210);
    a.team_end(t, 300, kTeam);
  }
  a.thread_join(0, 310);
  const WaitStates w = a.finish();
  const PatternTime& p = of(w, WaitPattern::OmpExplicitBarrier);
  EXPECT_EQ(p.total_ns, 40 + 20);
  EXPECT_EQ(p.calls, 2u);
  EXPECT_EQ(p.caused_by[1], 60);
  EXPECT_EQ(p.by_comm.at(kTeam), 60);
  EXPECT_EQ(of(w, WaitPattern::OmpImplicitBarrier).total_ns, 0);
  // Each waiting thread's barrier, from its enter, for the thread that entered last.
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].loc, 0u);
  EXPECT_EQ(seen[0].enter, 100);
  EXPECT_EQ(seen[0].wait_ns, 40);
  EXPECT_EQ(seen[1].loc, 2u);
  EXPECT_EQ(seen[1].enter, 120);
  EXPECT_EQ(seen[1].wait_ns, 20);
  for (const auto& x : seen) {
    EXPECT_EQ(x.pattern, WaitPattern::OmpExplicitBarrier);
    EXPECT_EQ(x.region, kOmpBarrier);
    EXPECT_EQ(x.cause, 1u);
  }
}

// The release is seen after the acquisition (another location's events come later): the
// acquisition waits from its region's enter to the release, bounded by the acquisition.
TEST(WaitStates, OpenMpLockReleaseSeenLater) {
  WaitStateAnalysis a(three_threads());
  a.enter(1, 100, kSetLock);
  a.lock_acquire(1, 180, OTF2_PARADIGM_OPENMP, 4, 2);
  a.leave(1, 181);
  a.enter(2, 100, kCritical);
  a.lock_acquire(2, 130, OTF2_PARADIGM_OPENMP, 5, 2);
  a.lock_release(2, 140, OTF2_PARADIGM_OPENMP, 5, 2);
  a.leave(2, 141);
  a.enter(0, 50, kSetLock);
  a.lock_acquire(0, 51, OTF2_PARADIGM_OPENMP, 4, 1);
  a.leave(0, 52);
  a.enter(0, 60, kCritical);
  a.lock_acquire(0, 61, OTF2_PARADIGM_OPENMP, 5, 1);
  a.lock_release(0, 160, OTF2_PARADIGM_OPENMP, 5, 1); // after thread 2's acquisition
  a.leave(0, 161);
  a.lock_release(0, 170, OTF2_PARADIGM_OPENMP, 4, 1);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::OmpLockContention).total_ns, 70);
  EXPECT_EQ(of(w, WaitPattern::OmpLockContention).caused_by[0], 70);
  EXPECT_EQ(of(w, WaitPattern::OmpCriticalContention).total_ns, 30);
  EXPECT_EQ(of(w, WaitPattern::OmpCriticalContention).by_location[2], 30);
  EXPECT_EQ(of(w, WaitPattern::OmpCriticalContention).by_region.at(kCritical), 30);
}

// Idle Threads: the master (location 0) runs serial code from 0 to 100 and from 300 to 350, the
// other two threads of its process, members of its team, idle that long; an acquisition outside
// any lock routine (omp_test_lock) waits for nothing.
TEST(WaitStates, OpenMpIdleThreadsAndTestLock) {
  WaitStateAnalysis a(three_threads());
  a.enter(0, 0, kMain);
  a.thread_fork(0, 100);
  for (std::uint32_t t = 0; t < 3; ++t) {
    a.team_begin(t, 110, kTeam);
    if (t == 1) a.lock_release(1, 120, OTF2_PARADIGM_OPENMP, 7, 1);
    a.team_end(t, 290, kTeam);
  }
  a.thread_join(0, 300);
  a.lock_acquire(0, 310, OTF2_PARADIGM_OPENMP, 7, 2);
  a.leave(0, 350);
  const WaitStates w = a.finish();
  const PatternTime& p = of(w, WaitPattern::OmpIdleThreads);
  EXPECT_EQ(p.total_ns, 2 * 150);
  EXPECT_EQ(p.calls, 2u);
  EXPECT_EQ(p.by_location[0], 0);
  EXPECT_EQ(p.by_location[1], 150);
  EXPECT_EQ(p.caused_by[0], 300);
  EXPECT_EQ(p.by_region.at(kMain), 300);
  EXPECT_EQ(of(w, WaitPattern::OmpLockContention).total_ns, 0);
}

} // namespace
} // namespace htrace::analysis
