// Unification of windows, PSCW groups, files and MPI_File handles across ranks (rma_io_defs.cpp),
// on hand-made per-rank definitions: the pure function, no MPI.
#include "record/rma_io_defs.h"

#include <gtest/gtest.h>

namespace htrace::record {
namespace {

using Win = RmaIoDefs::Win;
using Handle = RmaIoDefs::Handle;

TEST(RmaIoUnify, WindowsAreTheKthCreationOverTheSameCommunicator) {
  // Ranks 0 and 1 share comm 0 (WORLD) and each has a private comm (SELF: 1 and 2). Rank 1
  // created a window over its SELF before the two WORLD windows.
  RmaIoPart r0, r1;
  r0.windows = {Win{"MPI_Win_allocate", 0}, Win{"MPI_Win_create", 0}};
  r1.windows = {Win{"MPI_Win_create", 2}, Win{"MPI_Win_allocate", 0}, Win{"MPI_Win_create", 0}};
  std::vector<RmaIoMaps> maps;
  const RmaIoGlobal g = unify_rma_io({r0, r1}, 7, maps);
  ASSERT_EQ(g.windows.size(), 3u);
  EXPECT_EQ(g.windows[0].name, "MPI_Win_allocate");
  EXPECT_EQ(g.windows[0].comm, 0u);
  EXPECT_EQ(g.windows[1].name, "MPI_Win_create");
  EXPECT_EQ(g.windows[2].comm, 2u);
  EXPECT_EQ(maps[0].windows, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(maps[1].windows, (std::vector<std::uint32_t>{2, 0, 1}));
}

TEST(RmaIoUnify, GroupsByMembersAfterTheCommunicatorsGroups) {
  RmaIoPart r0, r1, r2;
  r0.groups = {{1, 2}};
  r1.groups = {{0}};
  r2.groups = {{0}, {1, 2}, {2, 1}}; // member order matters: group rank order
  std::vector<RmaIoMaps> maps;
  const RmaIoGlobal g = unify_rma_io({r0, r1, r2}, 5, maps);
  ASSERT_EQ(g.groups.size(), 3u);
  EXPECT_EQ(g.first_group, 5u);
  EXPECT_EQ(maps[0].groups, (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(maps[1].groups, (std::vector<std::uint32_t>{6}));
  EXPECT_EQ(maps[2].groups, (std::vector<std::uint32_t>{6, 5, 7}));
  EXPECT_EQ(g.groups[2], (std::vector<int>{2, 1}));
}

TEST(RmaIoUnify, FilesByNameHandlesByCommunicatorAndOrder) {
  RmaIoPart r0, r1;
  r0.files = {"shared.dat", "rank0.dat"};
  r0.handles = {Handle{"shared.dat", 0, 0}, Handle{"rank0.dat", 1, 1}, Handle{"shared.dat", 0, 0}};
  r1.files = {"rank1.dat", "shared.dat"};
  r1.handles = {Handle{"rank1.dat", 0, 2}, Handle{"shared.dat", 1, 0}, Handle{"shared.dat", 1, 0}};
  std::vector<RmaIoMaps> maps;
  const RmaIoGlobal g = unify_rma_io({r0, r1}, 0, maps);
  EXPECT_EQ(g.files, (std::vector<std::string>{"shared.dat", "rank0.dat", "rank1.dat"}));
  EXPECT_EQ(maps[1].files, (std::vector<std::uint32_t>{2, 0}));
  // Two collective opens of shared.dat over WORLD: two handles, the same on both ranks.
  ASSERT_EQ(g.handles.size(), 4u);
  EXPECT_EQ(maps[0].handles, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(maps[1].handles, (std::vector<std::uint32_t>{3, 0, 2}));
  EXPECT_EQ(g.handles[3].file, 2u); // rank1.dat, in global file ids
  EXPECT_EQ(g.handles[1].comm, 1u);
}

TEST(RmaIoUnify, PartsAndMapsSurviveTheByteFormat) {
  RmaIoDefs local;
  local.windows = {Win{"w", 3}};
  local.groups = {{4, 5}};
  local.files = {"f"};
  local.handles = {Handle{"f", 0, 1}};
  const RmaIoPart part = to_part(local, {10, 11, 12, 13});
  RmaIoPart back;
  ASSERT_TRUE(deserialize(serialize(part), back));
  EXPECT_EQ(back.windows.at(0).comm, 13u);
  EXPECT_EQ(back.handles.at(0).comm, 11u);
  EXPECT_EQ(back.groups, part.groups);
  EXPECT_EQ(back.files, part.files);
  RmaIoMaps maps{{1, 2}, {3}, {}, {4}}, maps_back;
  ASSERT_TRUE(deserialize(serialize(maps), maps_back));
  EXPECT_EQ(maps_back.windows, maps.windows);
  EXPECT_EQ(maps_back.handles, maps.handles);
  std::string bytes = serialize(part);
  bytes.pop_back();
  RmaIoPart broken;
  EXPECT_FALSE(deserialize(bytes, broken));
}

} // namespace
} // namespace htrace::record
