// htrace-score's pieces without an archive: the option values, the function table it shares with
// the wrappers, the size model's arithmetic and the greedy choice of exclusions.
#include "cli_values.h"
#include "exclusion_plan.h"
#include "mpi_function_table.h"
#include "projection.h"

#include <gtest/gtest.h>

namespace htrace::score {
namespace {

TEST(ScoreValues, ByteCounts) {
  std::uint64_t b = 0;
  EXPECT_TRUE(parse_byte_count("500", b));
  EXPECT_EQ(b, 500u);
  EXPECT_TRUE(parse_byte_count("64k", b));
  EXPECT_EQ(b, 64u << 10);
  EXPECT_TRUE(parse_byte_count("2G", b));
  EXPECT_EQ(b, 2ull << 30);
  EXPECT_TRUE(parse_byte_count("3MB", b));
  EXPECT_EQ(b, 3u << 20);
  EXPECT_TRUE(parse_byte_count("1t", b));
  EXPECT_EQ(b, 1ull << 40);
  for (const char* bad : {"", "0", "-1", "1.5G", "G", "12x", "99999999999999999999", "16777216T"})
    EXPECT_FALSE(parse_byte_count(bad, b)) << bad;
}

TEST(ScoreValues, Durations) {
  double s = 0;
  EXPECT_TRUE(parse_duration("90", s));
  EXPECT_DOUBLE_EQ(s, 90);
  EXPECT_TRUE(parse_duration("1.5h", s));
  EXPECT_DOUBLE_EQ(s, 5400);
  EXPECT_TRUE(parse_duration("30min", s));
  EXPECT_DOUBLE_EQ(s, 1800);
  EXPECT_TRUE(parse_duration("0.25s", s));
  EXPECT_DOUBLE_EQ(s, 0.25);
  for (const char* bad : {"", "0", "-3", "1d", "inf", "nan", "s", "2 h"})
    EXPECT_FALSE(parse_duration(bad, s)) << bad;
}

TEST(ScoreValues, Factors) {
  double k = 0;
  EXPECT_TRUE(parse_factor("10", k));
  EXPECT_DOUBLE_EQ(k, 10);
  EXPECT_TRUE(parse_factor("0.5", k));
  EXPECT_DOUBLE_EQ(k, 0.5);
  for (const char* bad : {"", "0", "-2", "2x", "inf", "nan", "x"})
    EXPECT_FALSE(parse_factor(bad, k)) << bad;
}

TEST(ScoreFunctions, FollowTheWrappers) {
  const MpiFunction* send = find_mpi_function("MPI_Send");
  ASSERT_NE(send, nullptr);
  EXPECT_STREQ(send->family, "p2p");
  EXPECT_TRUE(send->excludable);
  EXPECT_EQ(send->kept, Kept::Never);
  EXPECT_EQ(send->effect, Effect::Send);
  // Never excluded: the life cycle, communicator constructors and destructors, windows, files.
  for (const char* name : {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Pcontrol",
                           "MPI_Comm_dup", "MPI_Comm_free", "MPI_Win_create", "MPI_File_open"}) {
    const MpiFunction* f = find_mpi_function(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_FALSE(f->excludable) << name;
  }
  // An excluded wait or test that completes a request is still recorded; so is MPI_Waitall with
  // any request, and an MPI_Improbe that finds a message.
  EXPECT_EQ(find_mpi_function("MPI_Wait")->kept, Kept::IfCompleted);
  EXPECT_EQ(find_mpi_function("MPI_Testsome")->kept, Kept::IfCompleted);
  EXPECT_EQ(find_mpi_function("MPI_Waitall")->kept, Kept::Always);
  EXPECT_EQ(find_mpi_function("MPI_Improbe")->kept, Kept::UnlessMissedPoll);
  EXPECT_EQ(find_mpi_function("MPI_Iprobe")->kept, Kept::Never);
  EXPECT_TRUE(find_mpi_function("MPI_Test")->poll);
  EXPECT_TRUE(find_mpi_function("MPI_Iprobe")->poll);
  EXPECT_FALSE(find_mpi_function("MPI_Wait")->poll);
  EXPECT_EQ(find_mpi_function("MPI_Allreduce")->effect, Effect::Collective);
  EXPECT_EQ(find_mpi_function("MPI_Ibarrier")->effect, Effect::NbCollective);
  EXPECT_EQ(find_mpi_function("MPI_Irecv")->effect, Effect::Receive);
  EXPECT_EQ(find_mpi_function("MPI_Put")->effect, Effect::Rma);
  EXPECT_EQ(find_mpi_function("MPI_File_write")->effect, Effect::Io);
  EXPECT_EQ(find_mpi_function("MPI_Send_c") == nullptr, false); // MPICH's rows too
  EXPECT_EQ(find_mpi_function("MPI_Nonexistent"), nullptr);
  EXPECT_EQ(find_mpi_function("mpi_send"), nullptr);
  EXPECT_EQ(mpi_families().size(), 16u);
}

RegionRow row(const char* name, std::uint64_t bytes, std::uint64_t removable,
              RegionRow::Lifecycle lifecycle = RegionRow::Lifecycle::None) {
  RegionRow r;
  r.name = name;
  r.mpi = find_mpi_function(name);
  r.family = r.mpi ? r.mpi->family : "user";
  r.lifecycle = lifecycle;
  r.bytes = bytes;
  r.removable_bytes = removable;
  return r;
}

// 4 ranks, each 2 s between MPI_Init and MPI_Finalize: 8 rank-seconds.
ArchiveScore archive() {
  ArchiveScore a;
  a.resolution = 1000;
  for (std::uint64_t r = 0; r < 4; ++r) {
    RankTally t;
    t.id = r;
    t.init_end = 1000;
    t.finalize_begin = 3000;
    a.ranks.push_back(t);
  }
  a.rows = {row("MPI_Init", 400, 0, RegionRow::Lifecycle::Init),
            row("MPI_Finalize", 400, 0, RegionRow::Lifecycle::Finalize),
            row("MPI_Send", 4000, 4000),
            row("MPI_Test", 2000, 1500),
            row("MPI_Waitall", 1600, 0),
            row("compute", 800, 0)};
  a.files.event_bytes = 9200;
  a.files.global_def_bytes = 5000;
  a.files.local_def_bytes = 400;
  a.files.anchor_bytes = 600;
  a.region_definition_bytes = 3000;
  return a;
}

TEST(ScoreProjection, Model) {
  const ArchiveScore a = archive();
  const SizeModel m = size_model(a);
  EXPECT_EQ(m.ranks, 4u);
  EXPECT_DOUBLE_EQ(m.rank_seconds, 8);
  EXPECT_TRUE(m.mpi_windows);
  EXPECT_EQ(m.run_bytes, 8400u);
  EXPECT_EQ(m.fixed_bytes, 800u);
  EXPECT_DOUBLE_EQ(m.rate(), 1050);
  EXPECT_DOUBLE_EQ(m.seconds(), 2);
  EXPECT_EQ(m.definitions_fixed, 600u + 3000u);
  EXPECT_EQ(m.definitions_per_rank, 2000u + 400u);
  // The archive's own ranks and seconds: its size.
  const Projection same = project(m, 4, 2);
  EXPECT_DOUBLE_EQ(same.total(), 9200 + 6000);
  // 16 ranks for 10 s: run bytes x 16*10/8, fixed and per-rank definitions x 4.
  const Projection p = project(m, 16, 10);
  EXPECT_DOUBLE_EQ(p.run_bytes, 8400.0 * 20);
  EXPECT_DOUBLE_EQ(p.fixed_bytes, 800.0 * 4);
  EXPECT_DOUBLE_EQ(p.definition_bytes, 3600.0 + 2400.0 * 4);
  const Scale s = scale_for(m, 16, 10);
  EXPECT_DOUBLE_EQ(scaled(a.rows[2], a.rows[2].bytes, s), 4000.0 * 20);
  EXPECT_DOUBLE_EQ(scaled(a.rows[0], a.rows[0].bytes, s), 400.0 * 4);
}

TEST(ScoreProjection, WithoutMpiWindows) {
  ArchiveScore a = archive();
  a.ranks[1].init_end = UINT64_MAX; // no MPI_Init seen: the span of its events
  a.ranks[1].first = 500;
  a.ranks[1].last = 4500;
  const SizeModel m = size_model(a);
  EXPECT_FALSE(m.mpi_windows);
  EXPECT_DOUBLE_EQ(m.rank_seconds, 2 + 4 + 2 + 2);
  // No window at all: run bytes scale with the ranks only.
  for (RankTally& t : a.ranks)
    t = RankTally{};
  const SizeModel flat = size_model(a);
  EXPECT_DOUBLE_EQ(flat.rank_seconds, 0);
  EXPECT_DOUBLE_EQ(project(flat, 8, 100).run_bytes, 8400.0 * 2);
}

TEST(ScoreExclusions, GreedyUntilTheLimit) {
  const ArchiveScore a = archive();
  const SizeModel m = size_model(a);
  const Scale s = scale_for(m, 4, 2);
  const double size = project(m, 4, 2).total(); // 15200
  // Under the limit already: nothing to exclude.
  const ExclusionPlan none = plan_exclusions(a.rows, s, size, 20000);
  EXPECT_TRUE(none.reached);
  EXPECT_TRUE(none.steps.empty());
  // The largest removable first: MPI_Send (4000) brings 15200 to 11200.
  const ExclusionPlan one = plan_exclusions(a.rows, s, size, 12000);
  ASSERT_EQ(one.steps.size(), 1u);
  EXPECT_EQ(one.steps[0].row->name, "MPI_Send");
  EXPECT_DOUBLE_EQ(one.size_after, 11200);
  EXPECT_EQ(one.htrace_value(), "MPI_Send");
  const ExclusionPlan two = plan_exclusions(a.rows, s, size, 10000);
  ASSERT_EQ(two.steps.size(), 2u);
  EXPECT_EQ(two.htrace_value(), "MPI_Send,MPI_Test");
  EXPECT_DOUBLE_EQ(two.size_after, 9700);
  EXPECT_TRUE(two.reached);
  EXPECT_EQ(two.scorep_filter(), "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\n    MPI_Send\n"
                                 "    MPI_Test\nSCOREP_REGION_NAMES_END\n");
  // Out of reach: every excludable function with removable bytes, and not reached. MPI_Init,
  // MPI_Waitall (nothing removable) and the user region are never suggested.
  const ExclusionPlan best = plan_exclusions(a.rows, s, size, 1000);
  EXPECT_FALSE(best.reached);
  EXPECT_EQ(best.htrace_value(), "MPI_Send,MPI_Test");
  EXPECT_DOUBLE_EQ(best.size_after, 9700);
  // Projected to 16 ranks for 10 s (184400 bytes) the removable bytes scale with the run.
  const Scale big = scale_for(m, 16, 10);
  const ExclusionPlan scaled_plan =
      plan_exclusions(a.rows, big, project(m, 16, 10).total(), 110000);
  ASSERT_EQ(scaled_plan.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(scaled_plan.steps[0].removed, 80000);
}

} // namespace
} // namespace htrace::score
