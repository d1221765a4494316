// The efficiency metrics fed by hand: waits decided after their call left, windows cutting
// through calls, nested MPI regions (deeply too), truncated calls, locations without MPI; and
// non-blocking collectives whose completion is seen before a partner started.
#include "analysis/efficiency.h"
#include "analysis/wait_states.h"

#include <cmath>
#include <gtest/gtest.h>
#include <otf2/OTF2_Events.h>

namespace htrace::analysis {
namespace {

constexpr std::uint32_t kWorld = 0, kUndefinedRoot = 0xFFFFFFFF;
constexpr std::uint32_t kMain = 0, kBarrier = 1, kWait = 2, kIbarrier = 3, kInner = 4;

std::map<std::uint32_t, format::RegionDef> regions() {
  auto mpi = [](const char* name) {
    format::RegionDef d;
    d.name = name;
    d.cls.paradigm = OTF2_PARADIGM_MPI;
    return d;
  };
  std::map<std::uint32_t, format::RegionDef> r;
  r[kMain] = format::RegionDef{"main", {}};
  r[kBarrier] = mpi("MPI_Barrier");
  r[kWait] = mpi("MPI_Wait");
  r[kIbarrier] = mpi("MPI_Ibarrier");
  r[kInner] = mpi("PMPI_Internal");
  return r;
}

RunLayout ranks(std::uint32_t n) {
  RunLayout l;
  for (std::uint32_t r = 0; r < n; ++r) {
    l.process_of.push_back(r);
    l.comm_members[kWorld].push_back(r);
  }
  l.regions = regions();
  return l;
}

// Two ranks: rank 0 computes 0..10, waits in a barrier 10..40 (rank 1 enters at 30, both leave
// at 40), computes to 100; rank 1 computes 0..30, then 40..100. The wait is reported after both
// calls left, once the instance is complete.
TEST(Efficiency, RunAndWindowFromAStream) {
  EfficiencyAnalysis e(2, regions(), TimeWindow{20, 60});
  for (std::uint32_t loc : {0u, 1u})
    e.enter(loc, 0, kMain);
  e.enter(0, 10, kBarrier);
  e.leave(0, 40);
  e.enter(1, 30, kBarrier);
  e.leave(1, 40);
  e.call_wait(0, 10, 20); // decided late: the barrier's last member entered at 30
  for (std::uint32_t loc : {0u, 1u})
    e.leave(loc, 100);
  const auto r = e.finish();
  EXPECT_EQ(r.run.runtime_ns, 100);
  EXPECT_EQ(r.run.locations[0].useful_ns, 70);
  EXPECT_EQ(r.run.locations[1].useful_ns, 90);
  EXPECT_EQ(r.run.locations[0].waiting_ns, 20);
  EXPECT_EQ(r.run.ideal_runtime_ns, 90); // max(70 + 20, 90 + 0)
  EXPECT_DOUBLE_EQ(r.run.load_balance, 80.0 / 90);
  EXPECT_DOUBLE_EQ(r.run.serialization, 1.0);
  EXPECT_DOUBLE_EQ(r.run.transfer, 0.9);
  EXPECT_EQ(r.run.communication, r.run.serialization * r.run.transfer);
  EXPECT_EQ(r.run.parallel, r.run.load_balance * r.run.communication);
  // 20..60: rank 0 in MPI 20..40, waiting 20..30; rank 1 in MPI 30..40.
  ASSERT_TRUE(r.window);
  EXPECT_EQ(r.window->runtime_ns, 40);
  EXPECT_EQ(r.window->locations[0].mpi_ns, 20);
  EXPECT_EQ(r.window->locations[0].waiting_ns, 10);
  EXPECT_EQ(r.window->locations[0].useful_ns, 20);
  EXPECT_EQ(r.window->locations[1].useful_ns, 30);
  EXPECT_EQ(r.window->ideal_runtime_ns, 30);
  EXPECT_DOUBLE_EQ(r.window->transfer, 0.75);
}

// MPI regions inside MPI regions count once; a call still open at the end ends at the
// location's last event; a location without MPI calls is no rank.
TEST(Efficiency, NestedTruncatedAndNonRanks) {
  EfficiencyAnalysis e(3, regions(), std::nullopt);
  e.enter(0, 0, kMain);
  e.enter(0, 10, kBarrier);
  e.enter(0, 12, kInner);
  e.leave(0, 18);
  e.leave(0, 20);
  e.enter(0, 50, kWait);
  e.leave(0, 60);
  e.enter(0, 70, kBarrier); // never left: ends at the location's last event, 80
  e.enter(1, 0, kMain);
  e.enter(1, 5, kBarrier);
  e.leave(1, 80);
  e.enter(2, 0, kMain); // an OpenMP worker: no MPI
  e.leave(2, 80);
  e.enter(0, 80, kMain); // the location's last event
  const auto r = e.finish();
  EXPECT_FALSE(r.window);
  EXPECT_EQ(r.run.ranks, 2u);
  EXPECT_FALSE(r.run.locations[2].calls_mpi);
  EXPECT_EQ(r.run.locations[0].mpi_ns, 10 + 10 + 10); // 10..20, 50..60, 70..80 (open)
  EXPECT_EQ(r.run.locations[0].useful_ns, 80 - 30);
  EXPECT_EQ(r.run.max_useful_ns, 50);
}

// Regions open deeper than the record keeps flags for in place (64): MPI calls among them count
// as at any depth, an MPI region inside another once.
TEST(Efficiency, RegionsNestedDeeperThanKeptInPlace) {
  EfficiencyAnalysis e(1, regions(), std::nullopt);
  for (int open = 0; open < 70; ++open)
    e.enter(0, 0, kMain);
  e.enter(0, 10, kBarrier); // the 71st
  e.leave(0, 20);
  for (int open = 70; open > 65; --open)
    e.leave(0, 25);
  e.enter(0, 30, kWait); // the 66th
  e.leave(0, 40);
  for (int open = 65; open > 63; --open)
    e.leave(0, 41);
  e.enter(0, 42, kWait);  // the 64th, kept in place
  e.enter(0, 43, kInner); // the 65th, inside it
  e.leave(0, 44);
  e.leave(0, 46);
  for (int open = 63; open > 2; --open)
    e.leave(0, 47);
  e.enter(0, 50, kBarrier); // the third
  e.leave(0, 60);
  for (int open = 2; open > 0; --open)
    e.leave(0, 70);
  const auto r = e.finish();
  EXPECT_EQ(r.run.locations[0].mpi_ns, 10 + 10 + 4 + 10);
  EXPECT_EQ(r.run.locations[0].useful_ns, 70 - 34);
}

TEST(Efficiency, NoRanksIsUndefined) {
  EfficiencyAnalysis e(1, regions(), std::nullopt);
  e.enter(0, 0, kMain);
  e.leave(0, 10);
  const auto r = e.finish();
  EXPECT_EQ(r.run.ranks, 0u);
  EXPECT_TRUE(std::isnan(r.run.parallel));
  EXPECT_TRUE(std::isnan(r.run.load_balance));
}

// MPI_Ibarrier: rank 0 starts at 0 and waits in MPI_Wait from 10; rank 1 starts only at 50, after
// rank 0's wait left (its clock ahead): the wait is decided once rank 1's request is seen, and
// bounded by rank 0's MPI_Wait (10..40).
TEST(Efficiency, NonBlockingCollectiveCompletedBeforeThePartnerStarted) {
  WaitStateAnalysis a(ranks(2));
  std::vector<std::pair<std::uint32_t, std::int64_t>> calls;
  a.on_call_wait([&](std::uint32_t loc, std::int64_t enter, std::int64_t wait) {
    calls.emplace_back(loc, wait);
    EXPECT_EQ(enter, 10);
  });
  a.enter(0, 0, kIbarrier);
  a.nbc_request(0, 7);
  a.leave(0, 1);
  a.enter(0, 10, kWait);
  a.nbc_complete(0, OTF2_COLLECTIVE_OP_BARRIER, kWorld, kUndefinedRoot, 0, 7);
  a.leave(0, 40);
  EXPECT_TRUE(calls.empty());
  a.enter(1, 50, kIbarrier);
  a.nbc_request(1, 9);
  a.leave(1, 51);
  a.enter(1, 52, kWait);
  a.nbc_complete(1, OTF2_COLLECTIVE_OP_BARRIER, kWorld, kUndefinedRoot, 0, 9);
  a.leave(1, 53);
  const WaitStates w = a.finish();
  EXPECT_EQ(w[WaitPattern::WaitAtBarrier].total_ns, 30);
  EXPECT_EQ(w[WaitPattern::WaitAtBarrier].caused_by[1], 30);
  EXPECT_EQ(w[WaitPattern::WaitAtBarrier].by_region.at(kWait), 30);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::make_pair(0u, std::int64_t{30}));
}

// A request never completed leaves the calls around it free to be reported; its start waits for
// nothing.
TEST(Efficiency, NonBlockingRequestNeverCompleted) {
  WaitStateAnalysis a(ranks(2));
  a.enter(0, 0, kIbarrier);
  a.nbc_request(0, 7);
  a.leave(0, 1);
  a.enter(1, 5, kIbarrier);
  a.nbc_request(1, 9);
  a.leave(1, 6);
  a.enter(1, 10, kWait);
  a.nbc_complete(1, OTF2_COLLECTIVE_OP_BARRIER, kWorld, kUndefinedRoot, 0, 9);
  a.leave(1, 20);
  EXPECT_EQ(a.finish()[WaitPattern::WaitAtBarrier].total_ns, 0);
}

} // namespace
} // namespace htrace::analysis
