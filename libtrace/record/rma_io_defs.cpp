#include "record/rma_io_defs.h"

#include "record/recorder_state.h"

#include <cstring>
#include <otf2/otf2.h>
#include <tuple>

namespace htrace::record {

// ---- registration (under the state mutex; never on the per-event path) ----

RmaWinId register_rma_win(const std::string& name, CommId comm) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.rma_io.windows.push_back({name, comm});
  return static_cast<RmaWinId>(s.rma_io.windows.size() - 1);
}

void rename_rma_win(RmaWinId win, const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (win < s.rma_io.windows.size()) s.rma_io.windows[win].name = name;
}

GroupId register_rank_group(const std::vector<int>& world_ranks) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto [it, inserted] =
      s.rma_io.group_by_members.emplace(world_ranks, static_cast<GroupId>(s.rma_io.groups.size()));
  if (inserted) s.rma_io.groups.push_back(world_ranks);
  return it->second;
}

IoFileId register_io_file(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto [it, inserted] =
      s.rma_io.file_by_name.emplace(name, static_cast<IoFileId>(s.rma_io.files.size()));
  if (inserted) s.rma_io.files.push_back(name);
  return it->second;
}

IoHandleId register_io_handle(const std::string& name, IoFileId file, CommId comm) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.rma_io.handles.push_back({name, file, comm});
  return static_cast<IoHandleId>(s.rma_io.handles.size() - 1);
}

// ---- unification ----

RmaIoPart to_part(const RmaIoDefs& mine, const std::vector<std::uint32_t>& comm_map) {
  auto global = [&](CommId c) { return c < comm_map.size() ? comm_map[c] : c; };
  RmaIoPart part;
  for (const auto& w : mine.windows)
    part.windows.push_back({w.name, global(w.comm)});
  part.groups = mine.groups;
  part.files = mine.files;
  for (const auto& h : mine.handles)
    part.handles.push_back({h.name, h.file, global(h.comm)});
  return part;
}

RmaIoGlobal unify_rma_io(const std::vector<RmaIoPart>& parts, std::uint32_t first_group,
                         std::vector<RmaIoMaps>& maps) {
  RmaIoGlobal g;
  g.first_group = first_group;
  maps.assign(parts.size(), {});
  std::map<std::vector<int>, std::uint32_t> group_ids;
  std::map<std::string, std::uint32_t> file_ids;
  // (global communicator, k-th creation over it on the rank) -> global id.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> win_ids, handle_ids;
  for (std::size_t rank = 0; rank < parts.size(); ++rank) {
    const RmaIoPart& p = parts[rank];
    RmaIoMaps& m = maps[rank];
    for (const auto& members : p.groups) {
      auto [it, inserted] =
          group_ids.emplace(members, first_group + static_cast<std::uint32_t>(g.groups.size()));
      if (inserted) g.groups.push_back(members);
      m.groups.push_back(it->second);
    }
    for (const auto& name : p.files) {
      auto [it, inserted] = file_ids.emplace(name, static_cast<std::uint32_t>(g.files.size()));
      if (inserted) g.files.push_back(name);
      m.files.push_back(it->second);
    }
    std::map<std::uint32_t, std::uint32_t> occurrence;
    for (const auto& w : p.windows) {
      auto [it, inserted] = win_ids.emplace(std::make_pair(w.comm, occurrence[w.comm]++),
                                            static_cast<std::uint32_t>(g.windows.size()));
      if (inserted) g.windows.push_back(w);
      m.windows.push_back(it->second);
    }
    occurrence.clear();
    for (const auto& h : p.handles) {
      auto [it, inserted] = handle_ids.emplace(std::make_pair(h.comm, occurrence[h.comm]++),
                                               static_cast<std::uint32_t>(g.handles.size()));
      if (inserted) {
        RmaIoDefs::Handle def = h;
        def.file = h.file < m.files.size() ? m.files[h.file] : OTF2_UNDEFINED_IO_FILE;
        g.handles.push_back(def);
      }
      m.handles.push_back(it->second);
    }
  }
  return g;
}

// ---- byte format (same binary on every rank) ----
namespace {

struct Out {
  std::string bytes;
  void u32(std::uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    bytes += s;
  }
  void ints(const std::vector<int>& v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (int x : v)
      u32(static_cast<std::uint32_t>(x));
  }
  void ids(const std::vector<std::uint32_t>& v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (auto x : v)
      u32(x);
  }
};

struct In {
  const std::string& bytes;
  std::size_t pos = 0;
  bool ok = true;
  std::uint32_t u32() {
    std::uint32_t v = 0;
    if (pos + sizeof v > bytes.size()) {
      ok = false;
      return 0;
    }
    std::memcpy(&v, bytes.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  /// A count that cannot exceed the remaining bytes (each element takes at least 4).
  std::uint32_t count() {
    const std::uint32_t n = u32();
    if (n > (bytes.size() - pos) / 4) ok = false;
    return ok ? n : 0;
  }
  std::string str() {
    const std::uint32_t n = u32();
    if (!ok || n > bytes.size() - pos) {
      ok = false;
      return {};
    }
    std::string s = bytes.substr(pos, n);
    pos += n;
    return s;
  }
  std::vector<int> ints() {
    std::vector<int> v(count());
    for (auto& x : v)
      x = static_cast<int>(u32());
    return v;
  }
  std::vector<std::uint32_t> ids() {
    std::vector<std::uint32_t> v(count());
    for (auto& x : v)
      x = u32();
    return v;
  }
};

} // namespace

std::string serialize(const RmaIoPart& p) {
  Out o;
  o.u32(static_cast<std::uint32_t>(p.windows.size()));
  for (const auto& w : p.windows) {
    o.str(w.name);
    o.u32(w.comm);
  }
  o.u32(static_cast<std::uint32_t>(p.groups.size()));
  for (const auto& g : p.groups)
    o.ints(g);
  o.u32(static_cast<std::uint32_t>(p.files.size()));
  for (const auto& f : p.files)
    o.str(f);
  o.u32(static_cast<std::uint32_t>(p.handles.size()));
  for (const auto& h : p.handles) {
    o.str(h.name);
    o.u32(h.file);
    o.u32(h.comm);
  }
  return std::move(o.bytes);
}

bool deserialize(const std::string& bytes, RmaIoPart& p) {
  In in{bytes};
  for (std::uint32_t i = 0, n = in.count(); in.ok && i < n; ++i) {
    RmaIoDefs::Win w;
    w.name = in.str();
    w.comm = in.u32();
    p.windows.push_back(std::move(w));
  }
  for (std::uint32_t i = 0, n = in.count(); in.ok && i < n; ++i)
    p.groups.push_back(in.ints());
  for (std::uint32_t i = 0, n = in.count(); in.ok && i < n; ++i)
    p.files.push_back(in.str());
  for (std::uint32_t i = 0, n = in.count(); in.ok && i < n; ++i) {
    RmaIoDefs::Handle h;
    h.name = in.str();
    h.file = in.u32();
    h.comm = in.u32();
    p.handles.push_back(std::move(h));
  }
  return in.ok && in.pos == bytes.size();
}

std::string serialize(const RmaIoMaps& m) {
  Out o;
  o.ids(m.windows);
  o.ids(m.groups);
  o.ids(m.files);
  o.ids(m.handles);
  return std::move(o.bytes);
}

bool deserialize(const std::string& bytes, RmaIoMaps& m) {
  In in{bytes};
  m.windows = in.ids();
  m.groups = in.ids();
  m.files = in.ids();
  m.handles = in.ids();
  return in.ok && in.pos == bytes.size();
}

// ---- the exchange in finalize() ----

std::string exchange_rma_io(const RmaIoDefs& mine, const std::vector<std::uint32_t>& comm_map,
                            std::uint32_t first_group, MPI_Comm comm, int rank, int size,
                            RmaIoMaps& maps, RmaIoGlobal& global) {
  // Most runs use neither RMA nor MPI-IO: one allreduce decides for every rank alike.
  int have = mine.empty() ? 0 : 1, anyone = 0;
  PMPI_Allreduce(&have, &anyone, 1, MPI_INT, MPI_MAX, comm);
  if (!anyone) return "";

  const std::string bytes = serialize(to_part(mine, comm_map));
  int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    long total = 0;
    for (int r = 0; r < size; ++r)
      displs[r] = static_cast<int>(total), total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR,
               0, comm);

  std::string error;
  std::string map_bytes; // rank 0: every rank's maps, back to back
  std::vector<int> map_lengths(rank == 0 ? size : 0), map_displs(rank == 0 ? size : 0);
  if (rank == 0) {
    std::vector<RmaIoPart> parts(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r)
      if (!deserialize(
              all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lengths[r])),
              parts[static_cast<std::size_t>(r)]))
        error = "corrupt window and file definitions from rank " + std::to_string(r);
    std::vector<RmaIoMaps> rank_maps;
    global = unify_rma_io(parts, first_group, rank_maps);
    for (int r = 0; r < size; ++r) {
      const std::string m = serialize(rank_maps[static_cast<std::size_t>(r)]);
      map_displs[r] = static_cast<int>(map_bytes.size());
      map_lengths[r] = static_cast<int>(m.size());
      map_bytes += m;
    }
  }
  int my_length = 0;
  PMPI_Scatter(map_lengths.data(), 1, MPI_INT, &my_length, 1, MPI_INT, 0, comm);
  std::string my_maps(static_cast<std::size_t>(my_length), '\0');
  PMPI_Scatterv(map_bytes.data(), map_lengths.data(), map_displs.data(), MPI_CHAR, my_maps.data(),
                my_length, MPI_CHAR, 0, comm);
  if (!deserialize(my_maps, maps)) error = "corrupt window and file mapping tables received";
  return error;
}

// ---- writing ----

std::string write_rma_io_definitions(OTF2_GlobalDefWriter_struct* handle, const RmaIoGlobal& g,
                                     const std::function<std::uint32_t(const std::string&)>& str) {
  auto* w = reinterpret_cast<OTF2_GlobalDefWriter*>(handle);
  auto failed = [](const char* what, OTF2_ErrorCode rc) {
    return std::string(what) + " failed: " + OTF2_Error_GetName(rc);
  };
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    const std::vector<std::uint64_t> members(g.groups[i].begin(), g.groups[i].end());
    // Members index the MPI locations group, whose entry i is world rank i.
    rc = OTF2_GlobalDefWriter_WriteGroup(
        w, g.first_group + static_cast<std::uint32_t>(i), str("MPI group"),
        OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
        static_cast<std::uint32_t>(members.size()), members.data());
    if (rc != OTF2_SUCCESS) return failed("writing a window's group", rc);
  }
  for (std::size_t i = 0; i < g.windows.size(); ++i) {
    const auto& win = g.windows[i];
    rc = OTF2_GlobalDefWriter_WriteRmaWin(w, static_cast<OTF2_RmaWinRef>(i), str(win.name),
                                          win.comm == kNoComm ? OTF2_UNDEFINED_COMM : win.comm,
                                          OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS);
    if (rc != OTF2_SUCCESS) return failed("writing an RMA window", rc);
  }
  if (g.files.empty() && g.handles.empty()) return "";
  rc = OTF2_GlobalDefWriter_WriteIoParadigm(
      w, kMpiIoParadigm, str("MPI-IO"), str("MPI I/O"), OTF2_IO_PARADIGM_CLASS_PARALLEL,
      OTF2_IO_PARADIGM_FLAG_NONE, 0, nullptr, nullptr, nullptr);
  if (rc != OTF2_SUCCESS) return failed("writing the MPI-IO paradigm", rc);
  for (std::size_t i = 0; i < g.files.size(); ++i) {
    // Scope: the machine (system tree node 0): MPI-IO files live on a shared file system.
    rc = OTF2_GlobalDefWriter_WriteIoRegularFile(w, static_cast<OTF2_IoFileRef>(i), str(g.files[i]),
                                                 0);
    if (rc != OTF2_SUCCESS) return failed("writing a file", rc);
  }
  for (std::size_t i = 0; i < g.handles.size(); ++i) {
    const auto& h = g.handles[i];
    rc = OTF2_GlobalDefWriter_WriteIoHandle(w, static_cast<OTF2_IoHandleRef>(i), str(h.name),
                                            h.file, kMpiIoParadigm, OTF2_IO_HANDLE_FLAG_NONE,
                                            h.comm == kNoComm ? OTF2_UNDEFINED_COMM : h.comm,
                                            OTF2_UNDEFINED_IO_HANDLE);
    if (rc != OTF2_SUCCESS) return failed("writing an I/O handle", rc);
  }
  return "";
}

namespace {

OTF2_ErrorCode write_map(OTF2_DefWriter* w, OTF2_MappingType type,
                         const std::vector<std::uint32_t>& map) {
  if (map.empty()) return OTF2_SUCCESS;
  OTF2_IdMap* idmap = OTF2_IdMap_CreateFromUint32Array(map.size(), map.data(), true);
  if (!idmap) return OTF2_SUCCESS; // identity
  const OTF2_ErrorCode rc = OTF2_DefWriter_WriteMappingTable(w, type, idmap);
  OTF2_IdMap_Free(idmap);
  return rc;
}

} // namespace

int write_rma_io_maps(OTF2_DefWriter_struct* handle, const RmaIoMaps& maps) {
  auto* w = reinterpret_cast<OTF2_DefWriter*>(handle);
  OTF2_ErrorCode rc = write_map(w, OTF2_MAPPING_RMA_WIN, maps.windows);
  if (rc == OTF2_SUCCESS) rc = write_map(w, OTF2_MAPPING_GROUP, maps.groups);
  if (rc == OTF2_SUCCESS) rc = write_map(w, OTF2_MAPPING_IO_FILE, maps.files);
  if (rc == OTF2_SUCCESS) rc = write_map(w, OTF2_MAPPING_IO_HANDLE, maps.handles);
  return rc;
}

} // namespace htrace::record
