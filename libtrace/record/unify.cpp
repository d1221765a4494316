// Unification of the ranks' process-local definitions into global ones (identity rules at the
// top of unify.h): one rank's leaf set, pairwise merges in rank order, the translations back to
// each rank's local ids, and the global definitions. A pure function of its input, no MPI; the
// messages' byte format is unify_wire.cpp.
#include "record/unify.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace htrace::record {
namespace {

std::string list_key(const std::vector<int>& ranks) {
  std::string key;
  for (int r : ranks)
    key += std::to_string(r) + ",";
  return key;
}

using RegionKey = std::tuple<const std::string*, int, int>;
struct RegionLess {
  bool operator()(const RegionKey& x, const RegionKey& y) const {
    if (*std::get<0>(x) != *std::get<0>(y)) return *std::get<0>(x) < *std::get<0>(y);
    return std::make_pair(std::get<1>(x), std::get<2>(x)) <
           std::make_pair(std::get<1>(y), std::get<2>(y));
  }
};
RegionKey region_key(const RegionDef& r) {
  return {&r.name, int(r.paradigm), int(r.role)};
}

/// Identity of an MPI communicator across ranks (see the top of unify.h).
struct CommLess {
  bool operator()(const DefSet::Comm* x, const DefSet::Comm* y) const {
    if (x->inter != y->inter) return x->inter < y->inter;
    if (x->occurrence != y->occurrence) return x->occurrence < y->occurrence;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
  }
};

std::uint32_t at(const std::vector<std::uint32_t>& map, std::uint32_t i) {
  return i < map.size() ? map[i] : kNoComm; // a corrupt part stays contained
}

} // namespace

DefSet leaf_set(const RankDefs& defs, LeafIds& ids) {
  DefSet set;
  RankDefs info;
  info.rank = defs.rank;
  info.host = defs.host;
  info.locations = defs.locations;
  info.process_properties = defs.process_properties;
  set.ranks.push_back(std::move(info));

  // Regions: one per (name, paradigm, role).
  std::map<RegionKey, std::uint32_t, RegionLess> regions; // keys point into set.regions
  set.regions.reserve(defs.regions.size());               // so it must not reallocate
  ids.regions.clear();
  for (const auto& r : defs.regions) {
    auto found = regions.find(region_key(r));
    if (found == regions.end()) {
      set.regions.push_back(r);
      found = regions
                  .emplace(region_key(set.regions.back()),
                           static_cast<std::uint32_t>(set.regions.size() - 1))
                  .first;
    }
    ids.regions.push_back(found->second);
  }

  // MPI communicators in registration order, each numbered among those with its member lists.
  // The parent is kept only when it is an earlier MPI communicator.
  ids.comms.assign(defs.comms.size(), CommRef{});
  std::map<std::pair<std::vector<int>, std::vector<int>>, std::uint32_t> occurrences;
  for (std::size_t local = 0; local < defs.comms.size(); ++local) {
    const CommDef& c = defs.comms[local];
    if (c.is_team) continue;
    DefSet::Comm g;
    g.name = c.name;
    g.inter = !c.remote_world_ranks.empty();
    // Intercommunicator: group A is the side whose list sorts first, so every rank describes the
    // same definition.
    const bool local_first = !g.inter || list_key(c.world_ranks) <= list_key(c.remote_world_ranks);
    g.a = local_first ? c.world_ranks : c.remote_world_ranks;
    if (g.inter) g.b = local_first ? c.remote_world_ranks : c.world_ranks;
    g.occurrence = occurrences[{g.a, g.b}]++;
    if (c.parent != kNoComm && c.parent < local && !ids.comms[c.parent].team)
      g.parent = ids.comms[c.parent].index;
    set.comms.push_back(std::move(g));
    ids.comms[local] = {false, static_cast<std::uint32_t>(set.comms.size() - 1)};
  }

  // OpenMP teams: merged when parent and members agree (aliases were merged at registration).
  std::map<std::tuple<bool, std::uint32_t, std::vector<LocationId>>, std::uint32_t> teams;
  for (std::size_t local = 0; local < defs.comms.size(); ++local) {
    const CommDef& c = defs.comms[local];
    if (!c.is_team) continue;
    if (c.alias != kNoComm && c.alias < local) {
      ids.comms[local] = ids.comms[c.alias];
      continue;
    }
    DefSet::Team t;
    t.name = c.name;
    for (LocationId l : c.team_locations)
      if (l != kNoLocation) t.members.push_back(l);
    if (c.parent != kNoComm && c.parent < local) t.parent = ids.comms[c.parent];
    auto key = std::make_tuple(t.parent.team, t.parent.index, t.members);
    auto [it, inserted] =
        teams.emplace(std::move(key), static_cast<std::uint32_t>(set.teams.size()));
    if (inserted) set.teams.push_back(std::move(t));
    ids.comms[local] = {true, it->second};
  }
  return set;
}

SetMap merge(DefSet& into, DefSet&& later) {
  SetMap map;
  for (auto& r : later.ranks)
    into.ranks.push_back(std::move(r));

  // Keys point into `into`'s vectors, which must not reallocate while the index is in use.
  into.regions.reserve(into.regions.size() + later.regions.size());
  std::map<RegionKey, std::uint32_t, RegionLess> regions;
  for (std::size_t i = 0; i < into.regions.size(); ++i)
    regions.emplace(region_key(into.regions[i]), static_cast<std::uint32_t>(i));
  map.regions.reserve(later.regions.size());
  for (auto& r : later.regions) {
    const auto found = regions.find(region_key(r));
    if (found != regions.end()) {
      map.regions.push_back(found->second);
    } else {
      map.regions.push_back(static_cast<std::uint32_t>(into.regions.size()));
      into.regions.push_back(std::move(r));
    }
  }

  into.comms.reserve(into.comms.size() + later.comms.size());
  std::map<const DefSet::Comm*, std::uint32_t, CommLess> comms;
  for (std::size_t i = 0; i < into.comms.size(); ++i)
    comms.emplace(&into.comms[i], static_cast<std::uint32_t>(i));
  map.comms.reserve(later.comms.size());
  for (auto& c : later.comms) {
    const auto found = comms.find(&c);
    if (found != comms.end()) {
      map.comms.push_back(found->second);
      continue;
    }
    // First seen in `later`: its parent (an earlier communicator of `later`) is known already.
    c.parent = c.parent == kNoComm ? kNoComm : at(map.comms, c.parent);
    map.comms.push_back(static_cast<std::uint32_t>(into.comms.size()));
    into.comms.push_back(std::move(c));
    comms.emplace(&into.comms.back(), map.comms.back());
  }

  // Teams belong to one process: never merged across ranks, appended in rank order.
  const auto team_base = static_cast<std::uint32_t>(into.teams.size());
  for (std::size_t i = 0; i < later.teams.size(); ++i)
    map.teams.push_back(team_base + static_cast<std::uint32_t>(i));
  for (auto& t : later.teams) {
    if (t.parent.index != kNoComm)
      t.parent.index = at(t.parent.team ? map.teams : map.comms, t.parent.index);
    into.teams.push_back(std::move(t));
  }
  return map;
}

SetMap compose(const SetMap& outer, const SetMap& inner) {
  SetMap out;
  for (std::uint32_t id : inner.regions)
    out.regions.push_back(at(outer.regions, id));
  for (std::uint32_t id : inner.comms)
    out.comms.push_back(at(outer.comms, id));
  for (std::uint32_t id : inner.teams)
    out.teams.push_back(at(outer.teams, id));
  return out;
}

SetMap global_ids(const DefSet& complete) {
  SetMap map;
  const auto comms = static_cast<std::uint32_t>(complete.comms.size());
  for (std::uint32_t i = 0; i < complete.regions.size(); ++i)
    map.regions.push_back(i);
  for (std::uint32_t i = 0; i < comms; ++i)
    map.comms.push_back(i);
  for (std::uint32_t i = 0; i < complete.teams.size(); ++i)
    map.teams.push_back(comms + i);
  return map;
}

IdMaps local_maps(const LeafIds& ids, const SetMap& to_global) {
  IdMaps maps;
  for (std::uint32_t id : ids.regions)
    maps.regions.push_back(at(to_global.regions, id));
  for (const CommRef& ref : ids.comms)
    maps.comms.push_back(ref.index == kNoComm
                             ? kNoComm
                             : at(ref.team ? to_global.teams : to_global.comms, ref.index));
  return maps;
}

Unified global_definitions(const DefSet& complete) {
  Unified u;
  u.regions = complete.regions;

  // Group 0: MPI locations, index i = world rank i (its master thread's location id is i).
  GlobalGroup mpi_locations{GroupKind::MpiLocations, {}};
  for (std::size_t rank = 0; rank < complete.ranks.size(); ++rank)
    mpi_locations.members.push_back(rank);
  u.groups.push_back(std::move(mpi_locations));

  // Group 1 (only with OpenMP teams): every thread location that was a team member.
  std::set<std::uint64_t> team_threads;
  for (const auto& t : complete.teams)
    team_threads.insert(t.members.begin(), t.members.end());
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

  const SetMap ids = global_ids(complete);
  for (const auto& c : complete.comms) {
    GlobalComm g;
    g.name = c.name;
    g.group = group_of(GroupKind::MpiComm, to_u64(c.a));
    if (c.inter) g.remote_group = group_of(GroupKind::MpiComm, to_u64(c.b));
    g.parent = c.parent;
    u.comms.push_back(std::move(g));
  }
  for (const auto& t : complete.teams) {
    GlobalComm g;
    g.name = t.name;
    g.team = true;
    if (t.parent.index != kNoComm)
      g.parent = at(t.parent.team ? ids.teams : ids.comms, t.parent.index);
    std::vector<std::uint64_t> members;
    for (LocationId l : t.members)
      members.push_back(omp_index[l]);
    g.group = group_of(GroupKind::OmpTeam, std::move(members));
    u.comms.push_back(std::move(g));
  }
  return u;
}

Unified unify(const std::vector<RankDefs>& all) {
  const std::size_t p = all.size();
  std::vector<LeafIds> ids(p);
  std::vector<DefSet> sets(p);
  for (std::size_t r = 0; r < p; ++r)
    sets[r] = leaf_set(all[r], ids[r]);
  if (p == 0) return global_definitions(DefSet{});
  // Up: in the round of `step`, rank r (a multiple of 2*step) merges rank r + step's set.
  std::vector<SetMap> up(p), to_global(p);
  std::size_t top = 1;
  for (; top < p; top *= 2)
    for (std::size_t r = 0; r + top < p; r += 2 * top)
      up[r + top] = merge(sets[r], std::move(sets[r + top]));
  // Down: each child's translation is its parent's composed with the child's merge map.
  to_global[0] = global_ids(sets[0]);
  for (std::size_t step = top / 2; step >= 1; step /= 2)
    for (std::size_t r = 0; r + step < p; r += 2 * step)
      to_global[r + step] = compose(to_global[r], up[r + step]);
  Unified u = global_definitions(sets[0]);
  for (std::size_t r = 0; r < p; ++r)
    u.maps.push_back(local_maps(ids[r], to_global[r]));
  return u;
}

} // namespace htrace::record
