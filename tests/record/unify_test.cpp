// Unification of process-local definitions (no MPI launch): region ids registered in different
// orders, communicator identity by member list and occurrence, intercommunicators, teams.
#include "record/unify.h"

#include <gtest/gtest.h>

namespace htrace::record {
namespace {

CommDef mpi_comm(const std::string& name, std::vector<int> ranks, std::vector<int> remote = {},
                 CommId parent = kNoComm) {
  CommDef c;
  c.name = name;
  c.world_ranks = std::move(ranks);
  c.remote_world_ranks = std::move(remote);
  c.parent = parent;
  return c;
}

TEST(Unify, RegionsRegisteredInDifferentOrderShareGlobalIds) {
  std::vector<RankDefs> all(2);
  all[0].regions = {{"MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint},
                    {"MPI_Recv", Paradigm::Mpi, RegionRole::PointToPoint}};
  all[1].regions = {{"MPI_Recv", Paradigm::Mpi, RegionRole::PointToPoint},
                    {"work", Paradigm::User, RegionRole::Function},
                    {"MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint}};
  const Unified u = unify(all);
  ASSERT_EQ(u.regions.size(), 3u);
  EXPECT_EQ(u.maps[0].regions, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(u.maps[1].regions, (std::vector<std::uint32_t>{1, 2, 0}));
}

TEST(Unify, CommunicatorsMatchByMembersAndOccurrence) {
  std::vector<RankDefs> all(3);
  for (int r = 0; r < 3; ++r) {
    all[r].comms.push_back(mpi_comm("world", {0, 1, 2}));
    all[r].comms.push_back(mpi_comm("self", {r}));
  }
  // Ranks 1 and 2 split off a pair; everybody dups world twice (two distinct comms).
  all[0].comms.push_back(mpi_comm("dup", {0, 1, 2}, {}, 0));
  all[0].comms.push_back(mpi_comm("dup", {0, 1, 2}, {}, 0));
  for (int r = 1; r < 3; ++r) {
    all[r].comms.push_back(mpi_comm("pair", {2, 1}, {}, 0));
    all[r].comms.push_back(mpi_comm("dup", {0, 1, 2}, {}, 0));
    all[r].comms.push_back(mpi_comm("dup", {0, 1, 2}, {}, 0));
  }
  const Unified u = unify(all);
  // world, self x3, dup #1, dup #2, pair.
  EXPECT_EQ(u.comms.size(), 7u);
  EXPECT_EQ(u.maps[0].comms[0], u.maps[2].comms[0]);
  EXPECT_NE(u.maps[0].comms[1], u.maps[1].comms[1]);
  EXPECT_EQ(u.maps[0].comms[2], u.maps[1].comms[3]); // first dup
  EXPECT_EQ(u.maps[0].comms[3], u.maps[2].comms[4]); // second dup
  EXPECT_NE(u.maps[0].comms[2], u.maps[0].comms[3]);
  EXPECT_EQ(u.maps[1].comms[2], u.maps[2].comms[2]);
  const GlobalComm& pair = u.comms[u.maps[1].comms[2]];
  EXPECT_EQ(u.groups[pair.group].members, (std::vector<std::uint64_t>{2, 1})); // comm rank order
  EXPECT_EQ(pair.parent, u.maps[1].comms[0]);
  EXPECT_EQ(u.groups[0].kind, GroupKind::MpiLocations);
  EXPECT_EQ(u.groups[0].members, (std::vector<std::uint64_t>{0, 1, 2}));
}

TEST(Unify, IntercommunicatorIsOneDefinitionSeenFromBothSides) {
  std::vector<RankDefs> all(2);
  all[0].comms.push_back(mpi_comm("inter", {0}, {1}));
  all[1].comms.push_back(mpi_comm("inter", {1}, {0}));
  const Unified u = unify(all);
  ASSERT_EQ(u.comms.size(), 1u);
  EXPECT_EQ(u.maps[0].comms[0], u.maps[1].comms[0]);
  EXPECT_EQ(u.groups[u.comms[0].group].members, (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(u.groups[u.comms[0].remote_group].members, (std::vector<std::uint64_t>{1}));
}

TEST(Unify, TeamsAreMergedPerProcessAndIndexTheOpenMpLocations) {
  std::vector<RankDefs> all(2);
  const LocationId w0 = (1ull << 32) | 0, w1 = (1ull << 32) | 1;
  for (int r = 0; r < 2; ++r) {
    CommDef team;
    team.is_team = true;
    team.name = "OpenMP team";
    team.team_locations = {static_cast<LocationId>(r), r ? w1 : w0};
    all[r].comms.push_back(team);
    all[r].comms.push_back(team); // same team again (next parallel region)
    CommDef alias = team;
    alias.team_locations.clear();
    alias.alias = 0; // merged at registration
    all[r].comms.push_back(alias);
  }
  const Unified u = unify(all);
  ASSERT_EQ(u.comms.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(u.maps[r].comms[0], u.maps[r].comms[1]);
    EXPECT_EQ(u.maps[r].comms[0], u.maps[r].comms[2]);
  }
  EXPECT_NE(u.maps[0].comms[0], u.maps[1].comms[0]);
  ASSERT_EQ(u.groups[1].kind, GroupKind::OmpLocations);
  EXPECT_EQ(u.groups[1].members, (std::vector<std::uint64_t>{0, 1, w0, w1}));
  const GlobalComm& team1 = u.comms[u.maps[1].comms[0]];
  EXPECT_EQ(u.groups[team1.group].members, (std::vector<std::uint64_t>{1, 3})); // indices
}

TEST(Unify, SerializationRoundTrips) {
  RankDefs d;
  d.rank = 3;
  d.host = "node7";
  d.locations = {{3, 10, 100, 200}, {(1ull << 32) | 3, 0, INT64_MAX, INT64_MIN}};
  d.regions = {{"MPI_Bcast", Paradigm::Mpi, RegionRole::Collective}};
  d.comms = {mpi_comm("x", {3, 1}, {0}, 5)};
  d.process_properties = {{"HTRACE::CLOCK::INIT_OFFSET", -42}};
  RankDefs back;
  ASSERT_TRUE(deserialize(serialize(d), back));
  EXPECT_EQ(back.host, "node7");
  EXPECT_EQ(back.locations.size(), 2u);
  EXPECT_EQ(back.locations[1].min_global, INT64_MAX);
  EXPECT_EQ(back.regions[0].name, "MPI_Bcast");
  EXPECT_EQ(back.comms[0].world_ranks, (std::vector<int>{3, 1}));
  EXPECT_EQ(back.comms[0].remote_world_ranks, (std::vector<int>{0}));
  EXPECT_EQ(back.comms[0].parent, 5u);
  EXPECT_EQ(back.process_properties[0].second, -42);
  std::string truncated = serialize(d);
  truncated.pop_back();
  EXPECT_FALSE(deserialize(truncated, back));
}

} // namespace
} // namespace htrace::record
