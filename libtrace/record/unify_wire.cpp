// The byte format of the definitions the ranks exchange while unifying (unify.h): one rank's
// RankDefs, merged DefSets, SetMap translations and the IdMaps sent back. Length-prefixed fields in
// the native layout: every rank runs the same binary. Deserializers fail on truncated or trailing
// bytes instead of reading past the end.
#include "record/unify.h"

#include <cstring>

namespace htrace::record {
namespace {

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

// Region lists are written the same way in both message kinds (one rank's, a merged set's).
void write_regions(Writer& w, const std::vector<RegionDef>& regions) {
  w.pod<std::uint64_t>(regions.size());
  for (const auto& r : regions) {
    w.str(r.name);
    w.pod(r.paradigm);
    w.pod(r.role);
  }
}

void read_regions(Reader& r, std::vector<RegionDef>& regions) {
  const auto count = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < count; ++i) {
    RegionDef def;
    def.name = r.str();
    def.paradigm = r.pod<Paradigm>();
    def.role = r.pod<RegionRole>();
    regions.push_back(std::move(def));
  }
}

void write_rank(Writer& w, const RankDefs& d) {
  w.pod<std::int32_t>(d.rank);
  w.str(d.host);
  w.vec(d.locations);
  w.pod<std::uint64_t>(d.process_properties.size());
  for (const auto& p : d.process_properties) {
    w.str(p.first);
    w.pod(p.second);
  }
}

void read_rank(Reader& r, RankDefs& d) {
  d.rank = r.pod<std::int32_t>();
  d.host = r.str();
  d.locations = r.vec<RankDefs::Loc>();
  const auto props = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < props; ++i) {
    std::string name = r.str();
    const auto value = r.pod<std::int64_t>();
    d.process_properties.emplace_back(std::move(name), value);
  }
}

} // namespace

std::string serialize(const RankDefs& d) {
  Writer w;
  w.pod<std::int32_t>(d.rank);
  w.str(d.host);
  w.vec(d.locations);
  write_regions(w, d.regions);
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
  read_regions(r, d.regions);
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
std::string serialize(const DefSet& set) {
  Writer w;
  w.pod<std::uint64_t>(set.ranks.size());
  for (const auto& d : set.ranks)
    write_rank(w, d);
  write_regions(w, set.regions);
  w.pod<std::uint64_t>(set.comms.size());
  for (const auto& c : set.comms) {
    w.str(c.name);
    w.pod<std::uint8_t>(c.inter);
    w.vec(c.a);
    w.vec(c.b);
    w.pod(c.occurrence);
    w.pod(c.parent);
  }
  w.pod<std::uint64_t>(set.teams.size());
  for (const auto& t : set.teams) {
    w.str(t.name);
    w.pod<std::uint8_t>(t.parent.team);
    w.pod(t.parent.index);
    w.vec(t.members);
  }
  return std::move(w.out);
}

bool deserialize(const std::string& bytes, DefSet& set) {
  Reader r{bytes};
  const auto ranks = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < ranks; ++i) {
    RankDefs d;
    read_rank(r, d);
    set.ranks.push_back(std::move(d));
  }
  read_regions(r, set.regions);
  const auto comms = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < comms; ++i) {
    DefSet::Comm c;
    c.name = r.str();
    c.inter = r.pod<std::uint8_t>() != 0;
    c.a = r.vec<int>();
    c.b = r.vec<int>();
    c.occurrence = r.pod<std::uint32_t>();
    c.parent = r.pod<std::uint32_t>();
    set.comms.push_back(std::move(c));
  }
  const auto teams = r.pod<std::uint64_t>();
  for (std::uint64_t i = 0; r.ok && i < teams; ++i) {
    DefSet::Team t;
    t.name = r.str();
    t.parent.team = r.pod<std::uint8_t>() != 0;
    t.parent.index = r.pod<std::uint32_t>();
    t.members = r.vec<LocationId>();
    set.teams.push_back(std::move(t));
  }
  return r.ok && r.pos == bytes.size();
}

std::string serialize(const SetMap& map) {
  Writer w;
  w.vec(map.regions);
  w.vec(map.comms);
  w.vec(map.teams);
  return std::move(w.out);
}

bool deserialize(const std::string& bytes, SetMap& map) {
  Reader r{bytes};
  map.regions = r.vec<std::uint32_t>();
  map.comms = r.vec<std::uint32_t>();
  map.teams = r.vec<std::uint32_t>();
  return r.ok && r.pos == bytes.size();
}
} // namespace htrace::record
