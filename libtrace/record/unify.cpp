#include "record/unify.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace htrace::record {
namespace {

// ---- a minimal length-prefixed byte format (same binary on every rank) ----
struct Writer {
  std::string out;
  template <class T> void pod(const T& v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod<std::uint64_t>(s.size());
    out += s;
  }
  template <class T> void vec(const std::vector<T>& v) {
    pod<std::uint64_t>(v.size());
    if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
};

struct Reader {
  const std::string& in;
  std::size_t pos = 0;
  bool ok = true;
  template <class T> T pod() {
    T v{};
    if (pos + sizeof v > in.size()) {
      ok = false;
      return v;
    }
    std::memcpy(&v, in.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    if (!ok || pos + n > in.size()) {
      ok = false;
      return {};
    }
    std::string s = in.substr(pos, n);
    pos += n;
    return s;
  }
  template <class T> std::vector<T> vec() {
    const auto n = pod<std::uint64_t>();
    if (!ok || n > (in.size() - pos) / sizeof(T)) {
      ok = false;
      return {};
    }
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), in.data() + pos, n * sizeof(T));
    pos += n * sizeof(T);
    return v;
  }
};

std::string list_key(const std::vector<int>& ranks) {
  std::string key;
  for (int r : ranks)
    key += std::to_string(r) + ",";
  return key;
}

} // namespace

std::string serialize(const RankDefs& d) {
  Writer w;
  w.pod<std::int32_t>(d.rank);
  w.str(d.host);
  w.vec(d.locations);
  w.pod<std::uint64_t>(d.regions.size());
  for (const auto& r : d.regions) {
    w.str(r.name);
    w.pod(r.paradigm);
    w.pod(r.role);
  }
  w.pod<std::uint64_t>(d.comms.size());
  for (const auto& c : d.comms) {
    w.pod<std::uint8_t>(c.is_team);
    w.str(c.name);
    w.pod(c.parent);
    w.vec(c.world_ranks);
    w.vec(c.remote_world_ranks);
    w.vec(c.team_locations);
    w.pod(c.alias);
  }
  w.pod<std::uint64_t>(d.process_properties.size());
  for (const auto& p : d.process_properties) {
    w.str(p.first);
    w.pod(p.second);
  }
  return std::move(w.out);
}

bool deserialize(const std::string& bytes, RankDefs& d) {
  Reader r{bytes};
  d.rank = r.pod<std::int32_t>();
  d.host = r.str();
  d.locations = r.vec<RankDefs::Loc>();
  const auto regions = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < regions; ++i) {
    RegionDef def;
    def.name = r.str();
    def.paradigm = r.pod<Paradigm>();
    def.role = r.pod<RegionRole>();
    d.regions.push_back(std::move(def));
  }
  const auto comms = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < comms; ++i) {
    CommDef c;
    c.is_team = r.pod<std::uint8_t>() != 0;
    c.name = r.str();
    c.parent = r.pod<CommId>();
    c.world_ranks = r.vec<int>();
    c.remote_world_ranks = r.vec<int>();
    c.team_locations = r.vec<LocationId>();
    c.alias = r.pod<CommId>();
    d.comms.push_back(std::move(c));
  }
  const auto props = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < props; ++i) {
    std::string name = r.str();
    const auto value = r.pod<std::int64_t>();
    d.process_properties.emplace_back(std::move(name), value);
  }
  return r.ok && r.pos == bytes.size();
}

std::string serialize(const IdMaps& maps) {
  Writer w;
  w.vec(maps.regions);
  w.vec(maps.comms);
  return std::move(w.out);
}

bool deserialize(const std::string& bytes, IdMaps& maps) {
  Reader r{bytes};
  maps.regions = r.vec<std::uint32_t>();
  maps.comms = r.vec<std::uint32_t>();
  return r.ok && r.pos == bytes.size();
}

Unified unify(const std::vector<RankDefs>& all) {
  Unified u;
  u.maps.resize(all.size());

  // Regions: one global region per (name, paradigm, role).
  std::map<std::tuple<std::string, int, int>, std::uint32_t> region_ids;
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    for (const auto& r : all[rank].regions) {
      const auto key = std::make_tuple(r.name, int(r.paradigm), int(r.role));
      auto [it, inserted] = region_ids.emplace(key, static_cast<std::uint32_t>(u.regions.size()));
      if (inserted) u.regions.push_back(r);
      u.maps[rank].regions.push_back(it->second);
    }
  }

  // Group 0: MPI locations, index i = world rank i (its master thread's location id is i).
  GlobalGroup mpi_locations{GroupKind::MpiLocations, {}};
  for (std::size_t rank = 0; rank < all.size(); ++rank)
    mpi_locations.members.push_back(rank);
  u.groups.push_back(std::move(mpi_locations));

  // Group 1 (only with OpenMP teams): every thread location that was a team member.
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

  // MPI communicators, identified by (member lists, occurrence on the rank); see unify.h.
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
          // Group A is the side that sorts first, so every rank describes the same definition.
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

  // OpenMP teams: per process, merged when parent and members agree.
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

} // namespace htrace::record
