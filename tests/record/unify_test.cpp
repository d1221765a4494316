// Unification of process-local definitions (no MPI launch): region ids registered in different
// orders, communicator identity by member list and occurrence, intercommunicators, teams; the
// tree merge against a flat one-pass reference, on hand-made and on generated programs.
#include "record/unify.h"

#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>

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

// ---- the reference: one pass over ranks 0, 1, 2, ... (the algorithm before the tree merge) ----
std::string list_key(const std::vector<int>& ranks) {
  std::string key;
  for (int r : ranks)
    key += std::to_string(r) + ",";
  return key;
}

Unified flat_unify(const std::vector<RankDefs>& all) {
  Unified u;
  u.maps.resize(all.size());
  std::map<std::tuple<std::string, int, int>, std::uint32_t> region_ids;
  for (std::size_t rank = 0; rank < all.size(); ++rank)
    for (const auto& r : all[rank].regions) {
      const auto key = std::make_tuple(r.name, int(r.paradigm), int(r.role));
      auto [it, inserted] = region_ids.emplace(key, static_cast<std::uint32_t>(u.regions.size()));
      if (inserted) u.regions.push_back(r);
      u.maps[rank].regions.push_back(it->second);
    }
  GlobalGroup mpi_locations{GroupKind::MpiLocations, {}};
  for (std::size_t rank = 0; rank < all.size(); ++rank)
    mpi_locations.members.push_back(rank);
  u.groups.push_back(std::move(mpi_locations));
  std::set<std::uint64_t> team_threads;
  for (const auto& d : all)
    for (const auto& c : d.comms)
      if (c.is_team)
        for (LocationId l : c.team_locations)
          if (l != kNoLocation) team_threads.insert(l);
  std::map<std::uint64_t, std::uint64_t> omp_index;
  if (!team_threads.empty()) {
    GlobalGroup omp{GroupKind::OmpLocations, {team_threads.begin(), team_threads.end()}};
    for (std::size_t i = 0; i < omp.members.size(); ++i)
      omp_index[omp.members[i]] = i;
    u.groups.push_back(std::move(omp));
  }
  std::map<std::pair<GroupKind, std::vector<std::uint64_t>>, std::uint32_t> group_ids;
  auto group_of = [&](GroupKind kind, std::vector<std::uint64_t> members) {
    auto [it, inserted] = group_ids.emplace(std::make_pair(kind, members),
                                            static_cast<std::uint32_t>(u.groups.size()));
    if (inserted) u.groups.push_back({kind, std::move(members)});
    return it->second;
  };
  auto to_u64 = [](const std::vector<int>& v) {
    return std::vector<std::uint64_t>(v.begin(), v.end());
  };
  std::map<std::string, std::uint32_t> comm_ids;
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    auto& map = u.maps[rank].comms;
    map.assign(all[rank].comms.size(), kNoComm);
    std::map<std::string, int> occurrences;
    for (std::size_t local = 0; local < all[rank].comms.size(); ++local) {
      const CommDef& c = all[rank].comms[local];
      if (c.is_team) continue;
      const bool inter = !c.remote_world_ranks.empty();
      const std::string local_list = list_key(c.world_ranks);
      const std::string remote_list = inter ? list_key(c.remote_world_ranks) : std::string();
      const std::string lists = inter ? "inter:" + std::min(local_list, remote_list) + "|" +
                                            std::max(local_list, remote_list)
                                      : local_list;
      const std::string key = lists + "#" + std::to_string(occurrences[lists]++);
      auto [it, inserted] = comm_ids.emplace(key, static_cast<std::uint32_t>(u.comms.size()));
      if (inserted) {
        GlobalComm g;
        g.name = c.name;
        if (inter) {
          const bool local_first = local_list <= remote_list;
          g.group = group_of(GroupKind::MpiComm,
                             to_u64(local_first ? c.world_ranks : c.remote_world_ranks));
          g.remote_group = group_of(GroupKind::MpiComm,
                                    to_u64(local_first ? c.remote_world_ranks : c.world_ranks));
        } else {
          g.group = group_of(GroupKind::MpiComm, to_u64(c.world_ranks));
        }
        if (c.parent != kNoComm && c.parent < local) g.parent = map[c.parent];
        u.comms.push_back(std::move(g));
      }
      map[local] = it->second;
    }
  }
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    auto& map = u.maps[rank].comms;
    std::map<std::pair<std::uint32_t, std::vector<std::uint64_t>>, std::uint32_t> teams;
    for (std::size_t local = 0; local < all[rank].comms.size(); ++local) {
      const CommDef& c = all[rank].comms[local];
      if (!c.is_team) continue;
      if (c.alias != kNoComm && c.alias < local) {
        map[local] = map[c.alias];
        continue;
      }
      std::vector<std::uint64_t> members;
      for (LocationId l : c.team_locations)
        if (l != kNoLocation) members.push_back(omp_index[l]);
      const std::uint32_t parent =
          (c.parent != kNoComm && c.parent < local) ? map[c.parent] : kNoComm;
      auto [it, inserted] = teams.emplace(std::make_pair(parent, members),
                                          static_cast<std::uint32_t>(u.comms.size()));
      if (inserted) {
        GlobalComm g;
        g.name = c.name;
        g.team = true;
        g.parent = parent;
        g.group = group_of(GroupKind::OmpTeam, std::move(members));
        u.comms.push_back(std::move(g));
      }
      map[local] = it->second;
    }
  }
  return u;
}

void expect_same(const Unified& got, const Unified& want) {
  ASSERT_EQ(got.regions.size(), want.regions.size());
  for (std::size_t i = 0; i < want.regions.size(); ++i) {
    EXPECT_EQ(got.regions[i].name, want.regions[i].name) << "region " << i;
    EXPECT_EQ(got.regions[i].paradigm, want.regions[i].paradigm) << "region " << i;
    EXPECT_EQ(got.regions[i].role, want.regions[i].role) << "region " << i;
  }
  ASSERT_EQ(got.groups.size(), want.groups.size());
  for (std::size_t i = 0; i < want.groups.size(); ++i) {
    EXPECT_EQ(got.groups[i].kind, want.groups[i].kind) << "group " << i;
    EXPECT_EQ(got.groups[i].members, want.groups[i].members) << "group " << i;
  }
  ASSERT_EQ(got.comms.size(), want.comms.size());
  for (std::size_t i = 0; i < want.comms.size(); ++i) {
    EXPECT_EQ(got.comms[i].name, want.comms[i].name) << "comm " << i;
    EXPECT_EQ(got.comms[i].group, want.comms[i].group) << "comm " << i;
    EXPECT_EQ(got.comms[i].remote_group, want.comms[i].remote_group) << "comm " << i;
    EXPECT_EQ(got.comms[i].parent, want.comms[i].parent) << "comm " << i;
    EXPECT_EQ(got.comms[i].team, want.comms[i].team) << "comm " << i;
  }
  ASSERT_EQ(got.maps.size(), want.maps.size());
  for (std::size_t r = 0; r < want.maps.size(); ++r) {
    EXPECT_EQ(got.maps[r].regions, want.maps[r].regions) << "rank " << r;
    EXPECT_EQ(got.maps[r].comms, want.maps[r].comms) << "rank " << r;
  }
}

TEST(Unify, RegionsRegisteredInDifferentOrderShareGlobalIds) {
  std::vector<RankDefs> all(2);
  all[0].regions = {{"MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint},
                    {"MPI_Recv", Paradigm::Mpi, RegionRole::PointToPoint}};
  all[1].regions = {{"MPI_Recv", Paradigm::Mpi, RegionRole::PointToPoint},
                    {"work", Paradigm::User, RegionRole::Function},
                    {"MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint}};
  const Unified u = unify(all);
  expect_same(u, flat_unify(all));
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
  expect_same(u, flat_unify(all));
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
  expect_same(u, flat_unify(all));
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
  expect_same(u, flat_unify(all));
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

// ---- generated programs: communicators made collectively in one order, teams per process ----
struct Comm {
  std::vector<int> members;        ///< world ranks in comm rank order
  std::map<int, CommId> local_ids; ///< per member rank
};

RankDefs& add_comm(std::vector<RankDefs>& all, int rank, CommDef def) {
  all[rank].comms.push_back(std::move(def));
  return all[rank];
}

std::vector<RankDefs> generate(std::mt19937& rng, int p) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::vector<RankDefs> all(p);
  const std::vector<RegionDef> pool = {
      {"MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint},
      {"MPI_Recv", Paradigm::Mpi, RegionRole::PointToPoint},
      {"MPI_Barrier", Paradigm::Mpi, RegionRole::Barrier},
      {"MPI_Allreduce", Paradigm::Mpi, RegionRole::Collective},
      {"!$omp parallel", Paradigm::OpenMp, RegionRole::Parallel},
      {"!$omp for", Paradigm::OpenMp, RegionRole::Loop},
      {"solve", Paradigm::User, RegionRole::Function},
      {"solve", Paradigm::User, RegionRole::Loop}, // same name, other role: another region
      {"flush", Paradigm::Measurement, RegionRole::Artificial}};
  std::vector<Comm> comms;
  Comm world, self;
  for (int r = 0; r < p; ++r)
    world.members.push_back(r);
  for (int r = 0; r < p; ++r) {
    RankDefs& d = all[r];
    d.rank = r;
    d.host = "node" + std::to_string(r / 3);
    // Some ranks write no events at all.
    const bool idle = pick(4) == 0;
    d.locations.push_back({static_cast<LocationId>(r), idle ? 0u : 10u + static_cast<unsigned>(r),
                           idle ? INT64_MAX : 100 + r, idle ? INT64_MIN : 1000 + r});
    std::vector<RegionDef> mine;
    for (const auto& region : pool)
      if (pick(3) != 0) mine.push_back(region);
    std::shuffle(mine.begin(), mine.end(), rng);
    // A region name is registered once per process (register_region looks names up).
    std::set<std::string> names;
    for (auto& region : mine)
      if (names.insert(region.name).second) d.regions.push_back(region);
    d.process_properties = {{"HTRACE::CLOCK::INIT_OFFSET", r * 7}};
    world.local_ids[r] = static_cast<CommId>(d.comms.size());
    add_comm(all, r, mpi_comm("MPI_COMM_WORLD", world.members));
    self.local_ids[r] = static_cast<CommId>(d.comms.size());
    add_comm(all, r, mpi_comm("MPI_COMM_SELF", {r}));
  }
  comms.push_back(world);
  std::vector<std::vector<CommId>> teams(p); // per rank: its team ids
  const int ops = pick(12);
  for (int op = 0; op < ops; ++op) {
    const Comm parent = comms[static_cast<std::size_t>(pick(static_cast<int>(comms.size())))];
    switch (pick(4)) {
    case 0: { // MPI_Comm_dup: same member list, a later occurrence
      Comm dup{parent.members, {}};
      for (int r : parent.members) {
        dup.local_ids[r] = static_cast<CommId>(all[r].comms.size());
        add_comm(all, r, mpi_comm("dup", parent.members, {}, parent.local_ids.at(r)));
      }
      comms.push_back(dup);
      break;
    }
    case 1: { // MPI_Comm_split: colour and key per member
      std::map<int, std::vector<std::pair<int, int>>> parts; // colour -> (key, rank)
      for (int r : parent.members)
        parts[pick(3)].push_back({pick(4), r});
      for (auto& [colour, members] : parts) {
        std::stable_sort(members.begin(), members.end(),
                         [](auto& x, auto& y) { return x.first < y.first; });
        Comm part;
        for (auto& m : members)
          part.members.push_back(m.second);
        for (int r : part.members) {
          part.local_ids[r] = static_cast<CommId>(all[r].comms.size());
          add_comm(all, r, mpi_comm("split", part.members, {}, parent.local_ids.at(r)));
        }
        comms.push_back(part);
      }
      break;
    }
    case 2: { // MPI_Intercomm_create between the two halves of a communicator
      if (parent.members.size() < 2) break;
      const auto half =
          parent.members.begin() + pick(static_cast<int>(parent.members.size()) - 1) + 1;
      const std::vector<int> a(parent.members.begin(), half), b(half, parent.members.end());
      for (int r : a)
        add_comm(all, r, mpi_comm("inter", a, b, parent.local_ids.at(r)));
      for (int r : b)
        add_comm(all, r, mpi_comm("inter", b, a, parent.local_ids.at(r)));
      break;
    }
    case 3: { // an OpenMP team on one process, maybe nested, maybe the same as the last one
      const int r = pick(p);
      auto& d = all[r];
      CommDef team;
      team.is_team = true;
      team.name = "OpenMP team";
      if (!teams[r].empty() && pick(3) == 0) team.parent = teams[r].back();
      const int size = 1 + pick(3);
      for (int t = 0; t < size; ++t) {
        const LocationId l = t == 0
                                 ? static_cast<LocationId>(r)
                                 : (static_cast<LocationId>(t) << 32) | static_cast<LocationId>(r);
        team.team_locations.push_back(pick(8) == 0 ? kNoLocation : l); // a slot never filled
        const bool known = std::any_of(d.locations.begin(), d.locations.end(),
                                       [&](const RankDefs::Loc& x) { return x.id == l; });
        if (!known) d.locations.push_back({l, 5, 200, 300});
      }
      if (!teams[r].empty() && pick(2) == 0) {
        // The next parallel region with the same team: merged at registration (an alias) or,
        // when the registration could not tell yet, a full copy that unification merges.
        const CommDef& last = d.comms[teams[r].back()];
        team = last;
        team.alias = kNoComm;
        if (pick(2) == 0) {
          team.alias = teams[r].back();
          team.team_locations.clear();
        }
      }
      teams[r].push_back(static_cast<CommId>(d.comms.size()));
      d.comms.push_back(team);
      break;
    }
    }
  }
  return all;
}

TEST(Unify, GeneratedProgramsMatchTheFlatPass) {
  std::mt19937 rng(16);
  for (int run = 0; run < 300; ++run) {
    const int p = 1 + static_cast<int>(rng() % 23);
    const std::vector<RankDefs> all = generate(rng, p);
    SCOPED_TRACE("run " + std::to_string(run) + ", p = " + std::to_string(p));
    expect_same(unify(all), flat_unify(all));
    if (HasFatalFailure()) return;
  }
}

/// Unifies by merging left to right, one rank at a time, every set sent through its byte format.
Unified unify_left_to_right(const std::vector<RankDefs>& all) {
  const std::size_t p = all.size();
  std::vector<LeafIds> ids(p);
  std::vector<SetMap> maps(p);
  DefSet acc = leaf_set(all[0], ids[0]);
  for (std::size_t r = 1; r < p; ++r) {
    DefSet next;
    EXPECT_TRUE(deserialize(serialize(leaf_set(all[r], ids[r])), next));
    maps[r] = merge(acc, std::move(next));
    DefSet copy;
    EXPECT_TRUE(deserialize(serialize(acc), copy));
    acc = std::move(copy);
  }
  const SetMap to_global = global_ids(acc);
  Unified u = global_definitions(acc);
  for (std::size_t r = 0; r < p; ++r) {
    SetMap mine = to_global;
    if (r > 0) {
      EXPECT_TRUE(deserialize(serialize(compose(to_global, maps[r])), mine));
    }
    u.maps.push_back(local_maps(ids[r], mine));
  }
  return u;
}

TEST(Unify, AnyTreeShapeInRankOrderGivesTheSameIds) {
  std::mt19937 rng(7);
  for (int run = 0; run < 100; ++run) {
    const int p = 1 + static_cast<int>(rng() % 19);
    const std::vector<RankDefs> all = generate(rng, p);
    SCOPED_TRACE("run " + std::to_string(run) + ", p = " + std::to_string(p));
    expect_same(unify_left_to_right(all), unify(all));
    if (HasFatalFailure()) return;
  }
}

TEST(Unify, RanksWithoutDefinitionsKeepTheirPlace) {
  // Ranks 1 and 3 registered nothing and wrote nothing (e.g. started late): they still get a
  // location group and an index in the MPI locations group, and empty maps.
  std::vector<RankDefs> all(5);
  for (int r = 0; r < 5; ++r) {
    all[r].rank = r;
    all[r].locations.push_back({static_cast<LocationId>(r), 0, INT64_MAX, INT64_MIN});
    if (r % 2 == 1) continue;
    all[r].regions = {{"MPI_Barrier", Paradigm::Mpi, RegionRole::Barrier}};
    all[r].comms = {mpi_comm("world", {0, 1, 2, 3, 4}), mpi_comm("self", {r})};
  }
  const Unified u = unify(all);
  expect_same(u, flat_unify(all));
  EXPECT_TRUE(u.maps[1].regions.empty());
  EXPECT_TRUE(u.maps[3].comms.empty());
  EXPECT_EQ(u.maps[4].comms, (std::vector<std::uint32_t>{0, 3}));
  EXPECT_EQ(u.groups[0].members, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
}

TEST(Unify, MergeKeepsTheEarlierSetsIds) {
  std::vector<RankDefs> all(2);
  all[0].regions = {{"a", Paradigm::User, RegionRole::Function}};
  all[1].regions = {{"b", Paradigm::User, RegionRole::Function},
                    {"a", Paradigm::User, RegionRole::Function}};
  all[0].comms = {mpi_comm("pair", {0, 1}), mpi_comm("self", {0})};
  all[1].comms = {mpi_comm("self", {1}), mpi_comm("pair", {0, 1})};
  LeafIds ids0, ids1;
  DefSet set = leaf_set(all[0], ids0);
  const SetMap later = merge(set, leaf_set(all[1], ids1));
  EXPECT_EQ(later.regions, (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(later.comms, (std::vector<std::uint32_t>{2, 0}));
  ASSERT_EQ(set.ranks.size(), 2u);
  EXPECT_EQ(set.regions[0].name, "a");
  EXPECT_EQ(set.regions[1].name, "b");
}

TEST(Unify, SetSerializationRejectsDamage) {
  std::mt19937 rng(3);
  const std::vector<RankDefs> all = generate(rng, 6);
  LeafIds ids;
  const DefSet set = leaf_set(all[2], ids);
  const std::string bytes = serialize(set);
  DefSet back;
  ASSERT_TRUE(deserialize(bytes, back));
  EXPECT_EQ(serialize(back), bytes);
  for (std::size_t cut : {std::size_t{0}, bytes.size() / 2, bytes.size() - 1}) {
    DefSet broken;
    EXPECT_FALSE(deserialize(bytes.substr(0, cut), broken)) << "cut at " << cut;
  }
  SetMap map{{1, 2}, {3}, {}}, map_back;
  ASSERT_TRUE(deserialize(serialize(map), map_back));
  EXPECT_EQ(map_back.regions, map.regions);
  EXPECT_FALSE(deserialize(serialize(map) + "x", map_back));
  // Translations of a damaged part stay in range: unknown ids become kNoComm, never a crash.
  const SetMap shorter{{5}, {}, {}};
  EXPECT_EQ(compose(shorter, SetMap{{0, 7}, {1}, {}}).regions,
            (std::vector<std::uint32_t>{5, kNoComm}));
}

} // namespace
} // namespace htrace::record
