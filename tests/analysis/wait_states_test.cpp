// The wait-state analysis fed by hand: the orders a streaming reader may see the events in, and
// the runs a truncated or unusual archive holds (the archive tests cover the patterns).
#include "analysis/wait_states.h"

#include <gtest/gtest.h>
#include <otf2/OTF2_Events.h>

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
  a.recv(0, kWorld, 1, 7, kBlocking);
  a.leave(0, 150);
  a.enter(1, 130, kSend);
  a.send(1, kWorld, 0, 7, kBlocking);
  a.leave(1, 131);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateSender).total_ns, 30);
  EXPECT_EQ(of(w, WaitPattern::LateSender).caused_by[1], 30);
  EXPECT_EQ(of(w, WaitPattern::LateSender).by_region.at(kRecv), 30);
}

// A wait never exceeds the call: the send entered 500 ns after the receive left.
TEST(WaitStates, WaitBoundedByTheCall) {
  WaitStateAnalysis a(two_ranks());
  a.enter(0, 100, kRecv);
  a.recv(0, kWorld, 1, 7, kBlocking);
  a.leave(0, 140);
  a.enter(1, 640, kSend);
  a.send(1, kWorld, 0, 7, kBlocking);
  a.leave(1, 650);
  EXPECT_EQ(of(a.finish(), WaitPattern::LateSender).total_ns, 40);
}

// MPI_Sendrecv holds a send and a receive: Late Sender for its receive, Late Receiver for its
// send if it blocked until the partner's receive was posted; each bounded by the one call.
TEST(WaitStates, SendrecvWaitsForBothPartners) {
  WaitStateAnalysis a(two_ranks());
  a.enter(0, 0, kSendrecv);
  a.send(0, kWorld, 1, 1, kBlocking);
  a.recv(0, kWorld, 1, 2, kBlocking);
  a.leave(0, 100);
  a.enter(1, 60, kSendrecv);
  a.send(1, kWorld, 0, 2, kBlocking);
  a.recv(1, kWorld, 0, 1, kBlocking);
  a.leave(1, 110);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateSender).by_location[0], 60);
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).by_location[0], 60);
  EXPECT_EQ(of(w, WaitPattern::LateSender).by_location[1], 0);
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).by_location[1], 0);
}

// Records outside any MPI call (a hand-written archive) take part in matching but wait for
// nothing: the next message on the channel still pairs with the next receive.
TEST(WaitStates, RecordsOutsideMpiCallsKeepTheMatching) {
  WaitStateAnalysis a(two_ranks());
  a.enter(0, 0, kMain);
  a.recv(0, kWorld, 1, 7, kBlocking); // the first message, outside a call
  a.enter(0, 10, kRecv);
  a.recv(0, kWorld, 1, 7, kBlocking); // the second
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
  a.recv(1, kWorld, 2, 0, kBlocking);
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
  a.recv(1, kWorld, 0, 1, kBlocking);
  a.leave(1, 60);
  a.enter(1, 150, kRecv);
  a.recv(1, kWorld, 0, 2, kBlocking);
  a.leave(1, 160);
  const WaitStates w = a.finish();
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).total_ns, 20);
  EXPECT_EQ(of(w, WaitPattern::LateReceiver).by_region.at(kSsend), 20);
}

} // namespace
} // namespace htrace::analysis
