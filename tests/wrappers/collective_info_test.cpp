// Bytes, roots and operations that collective wrappers record (collective_info.cpp), computed on
// real communicators: run with 4 ranks. MPI_IN_PLACE, rooted/rootless, intercommunicators and
// neighbourhood collectives on a periodic ring.
#include "mpi/collective_info.h"

#include <gtest/gtest.h>
#include <mpi.h>
#include <otf2/OTF2_Events.h>

using htrace::mpi::CollectiveInfo;
namespace coll = htrace::mpi::coll;
constexpr std::uint32_t kNoRank = htrace::record::kNoRank;

namespace {
int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}
void expect(const CollectiveInfo& i, int op, std::uint32_t root, std::uint64_t sent,
            std::uint64_t received) {
  EXPECT_EQ(i.op, op);
  EXPECT_EQ(i.root, root);
  EXPECT_EQ(i.bytes_sent, sent);
  EXPECT_EQ(i.bytes_received, received);
}
} // namespace

TEST(CollectiveInfo, BarrierIsRootlessAndMovesNoData) {
  expect(coll::Barrier(MPI_COMM_WORLD), OTF2_COLLECTIVE_OP_BARRIER, kNoRank, 0, 0);
}

TEST(CollectiveInfo, BcastRootSendsToEveryMember) {
  const std::uint64_t n = static_cast<std::uint64_t>(size_of(MPI_COMM_WORLD));
  int buf[10];
  const CollectiveInfo i = coll::Bcast(buf, 10, MPI_INT, 1, MPI_COMM_WORLD);
  if (rank_of(MPI_COMM_WORLD) == 1)
    expect(i, OTF2_COLLECTIVE_OP_BCAST, 1, 40 * n, 40);
  else
    expect(i, OTF2_COLLECTIVE_OP_BCAST, 1, 0, 40);
}

TEST(CollectiveInfo, AllreduceInPlaceLeavesOutOwnBlock) {
  const std::uint64_t n = static_cast<std::uint64_t>(size_of(MPI_COMM_WORLD));
  double buf[3];
  expect(coll::Allreduce(buf, buf, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
         OTF2_COLLECTIVE_OP_ALLREDUCE, kNoRank, 24 * n, 24 * n);
  expect(coll::Allreduce(MPI_IN_PLACE, buf, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
         OTF2_COLLECTIVE_OP_ALLREDUCE, kNoRank, 24 * (n - 1), 24 * (n - 1));
}

TEST(CollectiveInfo, GathervRootReceivesSumOfCounts) {
  const int n = size_of(MPI_COMM_WORLD), me = rank_of(MPI_COMM_WORLD);
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  std::uint64_t total = 0;
  for (int r = 0; r < n; ++r)
    counts[static_cast<std::size_t>(r)] = r + 1, total += static_cast<std::uint64_t>(r + 1);
  int buf[64];
  const CollectiveInfo i = coll::Gatherv(buf, me + 1, MPI_INT, buf, counts.data(), displs.data(),
                                         MPI_INT, 0, MPI_COMM_WORLD);
  if (me == 0) {
    expect(i, OTF2_COLLECTIVE_OP_GATHERV, 0, 4, 4 * total);
    expect(coll::Gatherv(MPI_IN_PLACE, 0, MPI_INT, buf, counts.data(), displs.data(), MPI_INT, 0,
                         MPI_COMM_WORLD),
           OTF2_COLLECTIVE_OP_GATHERV, 0, 0, 4 * (total - 1));
  } else {
    expect(i, OTF2_COLLECTIVE_OP_GATHERV, 0, 4 * static_cast<std::uint64_t>(me + 1), 0);
  }
}

TEST(CollectiveInfo, ScatterAndReduceAreRooted) {
  const std::uint64_t n = static_cast<std::uint64_t>(size_of(MPI_COMM_WORLD));
  const int me = rank_of(MPI_COMM_WORLD);
  char buf[256];
  const CollectiveInfo s = coll::Scatter(buf, 8, MPI_CHAR, buf, 8, MPI_CHAR, 2, MPI_COMM_WORLD);
  if (me == 2)
    expect(s, OTF2_COLLECTIVE_OP_SCATTER, 2, 8 * n, 8);
  else
    expect(s, OTF2_COLLECTIVE_OP_SCATTER, 2, 0, 8);
  const CollectiveInfo r = coll::Reduce(buf, buf, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0)
    expect(r, OTF2_COLLECTIVE_OP_REDUCE, 0, 16, 16 * n);
  else
    expect(r, OTF2_COLLECTIVE_OP_REDUCE, 0, 16, 0);
}

TEST(CollectiveInfo, AlltoallwUsesEachType) {
  const int n = size_of(MPI_COMM_WORLD);
  std::vector<int> counts(static_cast<std::size_t>(n), 2), displs(static_cast<std::size_t>(n), 0);
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(n), MPI_SHORT);
  types[0] = MPI_DOUBLE;
  char buf[1];
  const std::uint64_t expected = 2 * 8 + static_cast<std::uint64_t>(n - 1) * 2 * 2;
  expect(coll::Alltoallw(buf, counts.data(), displs.data(), types.data(), buf, counts.data(),
                         displs.data(), types.data(), MPI_COMM_WORLD),
         OTF2_COLLECTIVE_OP_ALLTOALLW, kNoRank, expected, expected);
}

TEST(CollectiveInfo, ExscanRankZeroReceivesNothing) {
  int buf[4] = {0, 0, 0, 0}; // Exscan takes a const send buffer: the compiler wants it set
  const CollectiveInfo i = coll::Exscan(buf, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect(i, OTF2_COLLECTIVE_OP_EXSCAN, kNoRank, 16, rank_of(MPI_COMM_WORLD) == 0 ? 0 : 16);
}

TEST(CollectiveInfo, ReduceScatterSendsAllBlocksReceivesOwn) {
  const int n = size_of(MPI_COMM_WORLD), me = rank_of(MPI_COMM_WORLD);
  std::vector<int> counts(static_cast<std::size_t>(n));
  std::uint64_t total = 0;
  for (int r = 0; r < n; ++r)
    counts[static_cast<std::size_t>(r)] = 2 * r + 1, total += 2 * r + 1;
  int buf[1];
  expect(coll::Reduce_scatter(buf, buf, counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         OTF2_COLLECTIVE_OP_REDUCE_SCATTER, kNoRank, 4 * total,
         4 * static_cast<std::uint64_t>(2 * me + 1) * n);
}

TEST(CollectiveInfo, IntercommBcastRootGroupAndReceivers) {
  const int me = rank_of(MPI_COMM_WORLD);
  if (size_of(MPI_COMM_WORLD) < 4) GTEST_SKIP() << "needs 4 ranks";
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  const int color = me % 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, me, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 99, &inter);
  const std::uint64_t remote = 2;
  int buf[5];
  const int local = rank_of(half);
  if (color == 0) {
    const int root = local == 0 ? MPI_ROOT : MPI_PROC_NULL;
    const CollectiveInfo i = coll::Bcast(buf, 5, MPI_INT, root, inter);
    if (local == 0)
      expect(i, OTF2_COLLECTIVE_OP_BCAST, 0, 20 * remote, 0);
    else
      expect(i, OTF2_COLLECTIVE_OP_BCAST, kNoRank, 0, 0);
  } else {
    expect(coll::Bcast(buf, 5, MPI_INT, 0, inter), OTF2_COLLECTIVE_OP_BCAST, 0, 0, 20);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

TEST(CollectiveInfo, NeighborCollectivesCountTopologyNeighbours) {
  const int n = size_of(MPI_COMM_WORLD);
  int dims[1] = {n}, periods[1] = {1};
  MPI_Comm ring = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int buf[1];
  // A periodic 1-D Cartesian topology has two neighbours (left and right) in and out.
  expect(coll::Neighbor_allgather(buf, 3, MPI_INT, buf, 3, MPI_INT, ring),
         OTF2_COLLECTIVE_OP_ALLGATHER, kNoRank, 2 * 12, 2 * 12);
  int counts[2] = {1, 5}, displs[2] = {0, 0};
  expect(coll::Neighbor_alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, ring),
         OTF2_COLLECTIVE_OP_ALLTOALLV, kNoRank, 24, 24);
  MPI_Comm_free(&ring);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank_of(MPI_COMM_WORLD) != 0) ::testing::GTEST_FLAG(output) = "";
  const int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
