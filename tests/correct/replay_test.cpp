// The controlled logical clock (forward and backward amortization) on hand-built traces, with the
// exact timestamps the algorithm defines (Rabenseifner's CLC; Becker et al., backward
// amortization), on one simulated correction rank and on two and three with the processes
// partitioned in several ways: the result must not depend on the partition.
//
// Unless a case says otherwise: l_min 100 ns (MPI) and 10 ns (OpenMP), delta 1 ns, gamma 0.75 and
// slope m 0.5 (binary fractions: the expected values are exact). With them:
//  - forward: LC_i = max(t_i, LC_{i-1} + delta, LC_{i-1} + floor(gamma (t_i - t_{i-1}))), and a
//    receive takes at least LC(send) + l_min; the difference is its jump D;
//  - backward: the events before a receive with jump D whose forward time x lies in
//    [left, x_r), x_r = the receive's time before its jump and left = max(first event, x_r - D/m),
//    move by floor(D (x - left) / (x_r - left)), unless a send S there would pass its bound
//    ub(S) = LC(receive of S) - l_min: then the ramp is cut at the send needing the steepest
//    slope b = (D - a) / (x_r - x_S), a = ub(S) - x_S, and events from S on move by
//    floor(a + b (x - x_S)) (S itself by a), recursively before S with a.
#include "correct/replay.h"
#include "simulated_ranks.h"
#include "trace_builder.h"

#include <algorithm>
#include <array>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <string>

using namespace htrace::correct;
using namespace htrace;
using htrace::correct::testing::SimulatedRanks;
using htrace::correct::testing::TraceBuilder;

namespace {

using Times = std::vector<std::vector<int64_t>>; // final times per location

struct Clc {
  int64_t lmin = 100, lmin_omp = 10, delta = 1;
  double gamma = 0.75, slope = 0.5;
};

struct Outcome {
  Times times;
  std::vector<std::string> errors; // per correction rank: what it threw ("" if nothing)
  std::array<uint64_t, kMessageKinds> violations_before{}, violations_after{};
};

// Runs the replay on `ranks` simulated correction ranks, process p owned by rank owner[p], and
// reads every location's final times (Replay::begin, then next until the end).
Outcome correct(const TraceBuilder& trace, const Clc& clc, const std::vector<int>& owner,
                int ranks) {
  Options o;
  o.gamma = clc.gamma, o.delta_ns = clc.delta, o.slope = clc.slope;
  // Fixed on the "command line": the replay keeps them instead of lowering them to what the
  // trace shows.
  o.lmin_intra_ns = o.lmin_inter_ns = clc.lmin, o.lmin_omp_ns = clc.lmin_omp;
  Latencies l;
  l.intra = l.inter = clc.lmin, l.omp = clc.lmin_omp, l.defs = &trace.definitions();
  Outcome out;
  out.times.resize(trace.locations());
  std::mutex m;
  SimulatedRanks sim(ranks);
  const std::vector<std::exception_ptr> errors = sim.run([&](RankGroup& group) {
    LocalModel model = trace.model(owner, group.rank());
    Replay replay(ReplayContext{&trace.definitions(), &o, l, owner, &group}, model);
    replay.run();
    std::array<int64_t, 3> chunk{}, input{}; // small chunks: next() resumes mid-location
    for (size_t i = 0; i < model.locations.size(); ++i) {
      std::vector<int64_t>& times = out.times[model.locations[i].location];
      replay.begin(i);
      for (size_t n; (n = replay.next(chunk.data(), input.data(), chunk.size())) > 0;)
        times.insert(times.end(), chunk.begin(), chunk.begin() + static_cast<long>(n));
    }
    std::lock_guard<std::mutex> lock(m);
    for (int k = 0; k < kMessageKinds; ++k)
      out.violations_before[k] += replay.stats().violations_before[k],
          out.violations_after[k] += replay.stats().violations_after[k];
  });
  for (const std::exception_ptr& e : errors) {
    out.errors.emplace_back();
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const Error& error) {
      out.errors.back() = error.what();
      EXPECT_TRUE(error.agreed()) << error.what();
    } catch (const std::exception& other) {
      out.errors.back() = std::string("not an agreed Error: ") + other.what();
    }
  }
  return out;
}

// Process -> correction rank maps for `ranks` ranks: round robin, round robin backwards, blocks.
std::set<std::vector<int>> partitions(size_t processes, int ranks) {
  std::set<std::vector<int>> all;
  std::vector<int> robin(processes), backwards(processes), blocks(processes);
  for (size_t p = 0; p < processes; ++p) {
    robin[p] = static_cast<int>(p % size_t(ranks));
    backwards[p] = ranks - 1 - robin[p];
    blocks[p] = static_cast<int>(p * size_t(ranks) / processes);
  }
  all.insert({robin, backwards, blocks});
  return all;
}

// The final times on one correction rank, after checking that two and three ranks, every
// partition, give the same (and that nothing failed anywhere).
Outcome correct_everywhere(const TraceBuilder& trace, const Clc& clc = {}) {
  Outcome one = correct(trace, clc, std::vector<int>(trace.processes(), 0), 1);
  EXPECT_EQ(one.errors, std::vector<std::string>{""});
  for (int ranks : {2, 3})
    for (const std::vector<int>& owner : partitions(trace.processes(), ranks)) {
      SCOPED_TRACE("correction ranks: " + std::to_string(ranks) +
                   ", owners: " + ::testing::PrintToString(owner));
      const Outcome many = correct(trace, clc, owner, ranks);
      EXPECT_EQ(many.errors, std::vector<std::string>(size_t(ranks)));
      EXPECT_EQ(many.times, one.times);
      EXPECT_EQ(many.violations_before, one.violations_before);
      EXPECT_EQ(many.violations_after, one.violations_after);
    }
  return one;
}

// The error every correction rank reports, after checking they all report the same one, on one,
// two and three ranks.
std::string error_everywhere(const TraceBuilder& trace) {
  const Outcome one = correct(trace, {}, std::vector<int>(trace.processes(), 0), 1);
  EXPECT_EQ(one.errors.size(), 1u);
  for (int ranks : {2, 3})
    for (const std::vector<int>& owner : partitions(trace.processes(), ranks)) {
      SCOPED_TRACE("correction ranks: " + std::to_string(ranks) +
                   ", owners: " + ::testing::PrintToString(owner));
      EXPECT_EQ(correct(trace, {}, owner, ranks).errors,
                std::vector<std::string>(size_t(ranks), one.errors[0]));
    }
  return one.errors[0];
}

constexpr int kP2P = static_cast<int>(MessageKind::P2P);
constexpr int kCollective = static_cast<int>(MessageKind::Collective);
constexpr int kOpenMP = static_cast<int>(MessageKind::OpenMP);

} // namespace

// A ping-pong and a barrier that all keep the clock condition (one receive exactly at its bound),
// with equal input times: with Scalasca's parameters nothing moves.
TEST(Replay, TraceWithoutViolationIsUnchanged) {
  TraceBuilder t;
  const uint32_t p0 = t.process({0, 100, 100, 350, 400, 600, 700});
  const uint32_t p1 = t.process({10, 220, 230, 230, 500, 620});
  const uint32_t p2 = t.process({20, 450, 610, 900});
  t.message(p0, 1, p1, 1); // 100 -> 220
  t.message(p1, 2, p0, 3); // 230 -> 350
  // Ends at or after the latest other begin + 100: 600 >= 500 + 100, 620, 610 >= 400, 500 + 100.
  t.collective(format::CollectivePattern::AllToAll, {{p0, 4, 5}, {p1, 4, 5}, {p2, 1, 2}});
  Clc scalasca;
  scalasca.gamma = 0.99999, scalasca.slope = 0.01;
  const Outcome out = correct_everywhere(t, scalasca);
  EXPECT_EQ(out.times, (Times{{0, 100, 100, 350, 400, 600, 700},
                              {10, 220, 230, 230, 500, 620},
                              {20, 450, 610, 900}}));
  EXPECT_EQ(out.violations_before, (std::array<uint64_t, kMessageKinds>{}));
  EXPECT_EQ(out.violations_after, (std::array<uint64_t, kMessageKinds>{}));
}

// Receive at 1900 of a message sent at 2000: it moves to 2000 + 100 = 2100 (jump D = 200).
// Forward after it (gamma 0.75): 2200 -> max(2200, 2100 + 225) = 2325; 2600 -> max(2600,
// 2325 + 300) = 2625; 5000 -> max(5000, 2625 + 1800) = 5000 (the jump has decayed).
// Backward (m 0.5): left = 1900 - 200 / 0.5 = 1500; 1500 moves by 0, 1800 by 200 * 300 / 400 =
// 150 -> 1950: the intervals before the receive grow by the factor 1 + m (300 -> 450, 100 ->
// 150), every event keeps its order, 1000 (before left) stays.
TEST(Replay, SingleViolationForwardAndBackwardAmortization) {
  TraceBuilder t;
  const uint32_t sender = t.process({1000, 2000, 3000});
  const uint32_t receiver = t.process({1000, 1500, 1800, 1900, 2200, 2600, 5000});
  t.message(sender, 1, receiver, 3);
  const Outcome out = correct_everywhere(t);
  EXPECT_EQ(out.times[sender], (std::vector<int64_t>{1000, 2000, 3000}));
  EXPECT_EQ(out.times[receiver], (std::vector<int64_t>{1000, 1500, 1950, 2100, 2325, 2625, 5000}));
  EXPECT_EQ(out.times[receiver][3], out.times[sender][1] + 100); // exactly send + l_min
  EXPECT_TRUE(std::is_sorted(out.times[receiver].begin(), out.times[receiver].end()));
  EXPECT_EQ(out.violations_before[kP2P], 1u);
  EXPECT_EQ(out.violations_after[kP2P], 0u);
}

// The same trace with m 0.1: left = 1900 - 2000 would lie before the location's first event
// (1000), so the ramp starts there with the steeper slope 200 / 900: 1500 moves by
// floor(200 * 500 / 900) = 111, 1800 by floor(200 * 800 / 900) = 177.
TEST(Replay, BackwardRampStartsAtFirstEvent) {
  TraceBuilder t;
  const uint32_t sender = t.process({1000, 2000, 3000});
  const uint32_t receiver = t.process({1000, 1500, 1800, 1900, 2200, 2600, 5000});
  t.message(sender, 1, receiver, 3);
  Clc clc;
  clc.slope = 0.1;
  const Outcome out = correct_everywhere(t, clc);
  EXPECT_EQ(out.times[receiver], (std::vector<int64_t>{1000, 1611, 1977, 2100, 2325, 2625, 5000}));
  EXPECT_EQ(out.violations_after[kP2P], 0u);
}

// The receiver also sent at 1500 a message received at 1650: that send may move to 1650 - 100 =
// 1550 at most (a = 50). With m 0.25 the plain ramp (left = 1900 - 800 = 1100) would move it by
// 200 * 400 / 800 = 100, past its bound, so the ramp is cut there: slope b = (200 - 50) /
// (1900 - 1500) = 0.375; the send moves by 50 -> 1550, 1800 by 50 + 0.375 * 300 = 162.5 -> 1962.
// Before the send a ramp of 50 starts at 1500 - 50 / 0.25 = 1300: no event there, 1000 stays.
TEST(Replay, BackwardRampIsCutAtSendBound) {
  TraceBuilder t;
  const uint32_t p0 = t.process({1000, 1650, 2000, 3000});
  const uint32_t p1 = t.process({1000, 1500, 1800, 1900, 2200, 2600, 5000});
  t.message(p1, 1, p0, 1); // 1500 -> 1650: no violation
  t.message(p0, 2, p1, 3); // 2000 -> 1900: jump 200
  Clc clc;
  clc.slope = 0.25;
  const Outcome out = correct_everywhere(t, clc);
  EXPECT_EQ(out.times[p0], (std::vector<int64_t>{1000, 1650, 2000, 3000}));
  EXPECT_EQ(out.times[p1], (std::vector<int64_t>{1000, 1550, 1962, 2100, 2325, 2625, 5000}));
  EXPECT_EQ(out.times[p0][1], out.times[p1][1] + 100); // the send sits exactly at its bound
  EXPECT_EQ(out.violations_before[kP2P], 1u);
  EXPECT_EQ(out.violations_after[kP2P], 0u);
}

// P0 -> P1 -> P2, each receive violated, the second one by more once the first is corrected.
// P1: receive 900 -> 1000 + 100 = 1100 (D 200); its send at 1000 -> max(1000, 1101, 1100 + 75) =
// 1175; 3000 stays (1175 + 1500 < 3000). P2: receive 1050 -> 1175 + 100 = 1275 (D 225; the input
// send time alone would give 1100); 4000 stays. Backward: P1's 700 (left = 900 - 400 = 500) moves
// by 200 * 200 / 400 = 100 -> 800; P2's 800 (left = 1050 - 450 = 600) by 225 * 200 / 450 = 100
// -> 900. On several correction ranks this takes a second exchange round.
TEST(Replay, ViolationPropagatesAlongAChain) {
  TraceBuilder t;
  const uint32_t p0 = t.process({0, 1000, 2000});
  const uint32_t p1 = t.process({0, 700, 900, 1000, 3000});
  const uint32_t p2 = t.process({0, 800, 1050, 4000});
  t.message(p0, 1, p1, 2);
  t.message(p1, 3, p2, 2);
  const Outcome out = correct_everywhere(t);
  EXPECT_EQ(out.times, (Times{{0, 1000, 2000}, {0, 800, 1100, 1175, 3000}, {0, 900, 1275, 4000}}));
  EXPECT_EQ(out.times[p2][2], out.times[p1][3] + 100);
  EXPECT_EQ(out.violations_before[kP2P], 2u);
  EXPECT_EQ(out.violations_after[kP2P], 0u);
}

// An allreduce (every end after every other member's begin + 100). Begins 1400, 1500, 1200; ends
// 1550, 1600, 1560. P0's end -> 1500 + 100 = 1600 (D 50), P2's -> 1600 (D 40), P1's 1600 stays
// (1400 + 100 is earlier). With m 0.25, P0's ramp starts at 1550 - 200 = 1350: its begin at 1400
// moves by floor(50 * 50 / 200) = 12 -> 1412, within its bound (the other ends 1600 - 100 =
// 1500). P2's ramp starts at 1560 - 160 = 1400, after its begin (1200), which stays.
TEST(Replay, CollectiveEndsFollowTheLatestBegin) {
  TraceBuilder t;
  const uint32_t p0 = t.process({0, 1000, 1400, 1550, 3000});
  const uint32_t p1 = t.process({0, 1500, 1600, 3000});
  const uint32_t p2 = t.process({0, 1200, 1560, 3000});
  t.collective(format::CollectivePattern::AllToAll, {{p0, 2, 3}, {p1, 1, 2}, {p2, 1, 2}});
  Clc clc;
  clc.slope = 0.25;
  const Outcome out = correct_everywhere(t, clc);
  EXPECT_EQ(out.times,
            (Times{{0, 1000, 1412, 1600, 3000}, {0, 1500, 1600, 3000}, {0, 1200, 1600, 3000}}));
  EXPECT_EQ(out.violations_before[kCollective], 2u);
  EXPECT_EQ(out.violations_after[kCollective], 0u);
}

// A parallel region of process 0 (master L0, thread L1) in which L1 receives from process 1.
// L1's team begin 95 -> fork 100 + 10 = 110 (D 15, its first event: nothing before it to ramp).
// L1's receive 300 -> 250 + 100 = 350 (D 50); its ramp (m 0.25: left = max(110, 300 - 200))
// starts at L1's first event and moves it by 0. L1's team end: max(515, 350 + floor(0.75 * 215))
// = 515. L0's join 520 -> 515 + 10 = 525 (D 5); its ramp starts at 520 - 20 = 500 and moves the
// master's team end 510 by floor(5 * 10 / 20) = 2 -> 512; 1000 stays (525 + 360 < 1000).
TEST(Replay, OpenMPForkJoinWithMessageInside) {
  TraceBuilder t;
  const uint32_t master = t.process({0, 100, 110, 510, 520, 1000});
  const uint32_t worker = t.thread(master, {95, 300, 515});
  const uint32_t other = t.process({0, 250, 600});
  t.parallel({master, 1}, {master, 4}, {{worker, 0}}, {{worker, 2}});
  t.message(other, 1, worker, 1);
  Clc clc;
  clc.slope = 0.25;
  const Outcome out = correct_everywhere(t, clc);
  EXPECT_EQ(out.times[master], (std::vector<int64_t>{0, 100, 110, 512, 525, 1000}));
  EXPECT_EQ(out.times[worker], (std::vector<int64_t>{110, 350, 515}));
  EXPECT_EQ(out.times[other], (std::vector<int64_t>{0, 250, 600}));
  EXPECT_EQ(out.violations_before[kOpenMP], 2u);
  EXPECT_EQ(out.violations_before[kP2P], 1u);
  EXPECT_EQ(out.violations_after, (std::array<uint64_t, kMessageKinds>{}));
}

TEST(Replay, UnmatchedReceiveFailsWithOneMessageOnEveryRank) {
  TraceBuilder t;
  const uint32_t p0 = t.process({0, 100, 200});
  const uint32_t p1 = t.process({0, 150, 300});
  t.process({0, 50}); // a third process: every rank owns something on three ranks
  t.receive_only(p0, p1, 1);
  EXPECT_EQ(error_everywhere(t), "location 1 (process 1): event 1 receives a p2p message that is "
                                 "never sent (unmatched messages, e.g. from a truncated run)");
}

TEST(Replay, UnreceivedSendFailsWithOneMessageOnEveryRank) {
  TraceBuilder t;
  const uint32_t p0 = t.process({0, 100, 200});
  const uint32_t p1 = t.process({0, 150, 300});
  t.process({0, 50});
  t.message(p0, 1, p1, 1);
  t.send_only(p0, 2, p1, /*tag=*/7);
  EXPECT_EQ(error_everywhere(t), "a point-to-point message from process 0 to process 1 (sequence "
                                 "0) is never received (unmatched messages, e.g. from a "
                                 "truncated run)");
}
