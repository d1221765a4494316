#include "archive_defs.h"

#include "format/anchor_file.h"
#include "format/otf2_library.h"

#include <otf2/otf2.h>
#include <stdexcept>
#include <sys/stat.h>

namespace htrace::report {
namespace {

struct RawGroup {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  std::vector<std::uint64_t> members;
};

/// Definitions as OTF2 delivers them (references), resolved once everything is read.
struct Collector {
  ArchiveDefs* defs;
  std::map<std::uint32_t, std::string> strings;
  std::map<std::uint32_t, std::pair<std::string, std::uint32_t>> tree_nodes; // name, parent
  std::map<std::uint64_t, std::uint32_t> process_index;                      // group id -> index
  std::map<std::uint32_t, std::uint32_t> process_node;                       // index -> tree node
  std::map<std::uint32_t, RawGroup> groups;
  std::map<std::uint32_t, std::pair<std::string, std::uint32_t>> comms; // name, group
  std::vector<std::pair<std::uint64_t, std::uint64_t>> location_group;  // location id, group id

  std::string str(std::uint32_t ref) const {
    auto it = strings.find(ref);
    return it == strings.end() ? std::string() : it->second;
  }
};

Collector& of(void* user) {
  return *static_cast<Collector*>(user);
}

OTF2_CallbackCode on_clock(void* u, uint64_t resolution, uint64_t offset, uint64_t length,
                           uint64_t realtime) {
  ArchiveDefs& d = *of(u).defs;
  d.resolution = resolution ? resolution : 1;
  d.global_offset = offset;
  d.trace_length = length;
  d.realtime_ns = realtime == OTF2_UNDEFINED_TIMESTAMP ? 0 : realtime;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_string(void* u, OTF2_StringRef self, const char* s) {
  of(u).strings[self] = s ? s : "";
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_tree_node(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
                               OTF2_StringRef, OTF2_SystemTreeNodeRef parent) {
  of(u).tree_nodes[self] = {of(u).str(name), parent};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location_group(void* u, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                    OTF2_LocationGroupType, OTF2_SystemTreeNodeRef parent,
                                    OTF2_LocationGroupRef) {
  Collector& c = of(u);
  Process p;
  p.group_id = self;
  p.name = c.str(name);
  const auto index = static_cast<std::uint32_t>(c.defs->processes.size());
  c.process_index[self] = index;
  c.process_node[index] = parent;
  c.defs->processes.push_back(std::move(p));
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location(void* u, OTF2_LocationRef self, OTF2_StringRef name,
                              OTF2_LocationType, uint64_t events, OTF2_LocationGroupRef group) {
  Collector& c = of(u);
  Location l;
  l.id = self;
  l.name = c.str(name);
  l.events = events;
  c.defs->location_index[self] = static_cast<std::uint32_t>(c.defs->locations.size());
  c.defs->locations.push_back(std::move(l));
  c.location_group.emplace_back(self, group);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                            OTF2_StringRef, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                            OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
  Collector& c = of(u);
  Region r;
  r.name = c.str(name);
  r.kind = paradigm == OTF2_PARADIGM_MPI      ? RegionKind::Mpi
           : paradigm == OTF2_PARADIGM_OPENMP ? RegionKind::OpenMp
                                              : RegionKind::Other;
  // As htrace-correct reads them (correct/src/definitions.cpp).
  r.thread_barrier = paradigm != OTF2_PARADIGM_MPI && (role == OTF2_REGION_ROLE_BARRIER ||
                                                       role == OTF2_REGION_ROLE_IMPLICIT_BARRIER);
  r.neighborhood = r.name.rfind("MPI_Neighbor_", 0) == 0 || r.name.rfind("MPI_Ineighbor_", 0) == 0;
  const bool waits = paradigm != OTF2_PARADIGM_MPI && role == OTF2_REGION_ROLE_TASK_WAIT;
  r.task_group = waits && r.name.find("taskgroup") != std::string::npos;
  r.task_wait = waits && !r.task_group;
  c.defs->regions[self] = std::move(r);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_group(void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                           OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t n,
                           const uint64_t* members) {
  RawGroup g;
  g.type = type;
  g.paradigm = paradigm;
  g.members.assign(members, members + n);
  of(u).groups[self] = std::move(g);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_comm(void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                          OTF2_CommRef, OTF2_CommFlag) {
  of(u).comms[self] = {of(u).str(name), group};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location_property(void* u, OTF2_LocationRef location, OTF2_StringRef name,
                                       OTF2_Type type, OTF2_AttributeValue value) {
  Collector& c = of(u);
  auto it = c.defs->location_index.find(location);
  if (it == c.defs->location_index.end()) return OTF2_CALLBACK_SUCCESS;
  std::int64_t v = 0;
  switch (type) {
  case OTF2_TYPE_INT64:
    v = value.int64;
    break;
  case OTF2_TYPE_UINT64:
    v = static_cast<std::int64_t>(value.uint64);
    break;
  case OTF2_TYPE_INT32:
    v = value.int32;
    break;
  case OTF2_TYPE_UINT32:
    v = value.uint32;
    break;
  default:
    return OTF2_CALLBACK_SUCCESS; // only integer properties are reported
  }
  c.defs->locations[it->second].properties[c.str(name)] = v;
  return OTF2_CALLBACK_SUCCESS;
}

void resolve(Collector& c) {
  ArchiveDefs& d = *c.defs;
  for (const auto& [location, group] : c.location_group) {
    const std::uint32_t li = d.location_index[location];
    auto it = c.process_index.find(group);
    if (it == c.process_index.end()) { // a location without a known group gets its own process
      Process p;
      p.group_id = group;
      p.name = "process " + std::to_string(group);
      it = c.process_index.emplace(group, static_cast<std::uint32_t>(d.processes.size())).first;
      d.processes.push_back(std::move(p));
    }
    d.locations[li].process = it->second;
    d.processes[it->second].locations.push_back(li);
  }
  for (auto& [index, node] : c.process_node) {
    auto n = c.tree_nodes.find(node);
    // Score-P-like trees: machine -> node -> process; the host is the process node's parent.
    if (n != c.tree_nodes.end()) {
      auto host = c.tree_nodes.find(n->second.second);
      d.processes[index].host =
          host != c.tree_nodes.end() && n->second.second != OTF2_UNDEFINED_SYSTEM_TREE_NODE
              ? host->second.first
              : n->second.first;
    }
  }
  // Communicator members: a COMM_GROUP lists indices into its paradigm's COMM_LOCATIONS group.
  std::map<OTF2_Paradigm, const RawGroup*> comm_locations;
  for (const auto& [ref, g] : c.groups)
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) comm_locations[g.paradigm] = &g;
  for (const auto& [ref, cg] : c.comms) {
    Comm comm;
    comm.name = cg.first;
    auto g = c.groups.find(cg.second);
    if (g != c.groups.end()) {
      const RawGroup& group = g->second;
      comm.self = group.type == OTF2_GROUP_TYPE_COMM_SELF;
      const RawGroup* base =
          group.type == OTF2_GROUP_TYPE_COMM_LOCATIONS ? nullptr : comm_locations[group.paradigm];
      for (std::uint64_t m : group.members) {
        std::uint64_t location = m;
        if (group.type == OTF2_GROUP_TYPE_COMM_GROUP) {
          if (!base || m >= base->members.size()) continue;
          location = base->members[m];
        }
        auto li = d.location_index.find(location);
        if (li != d.location_index.end()) comm.members.push_back(li->second);
      }
    }
    d.comms[ref] = std::move(comm);
  }
}

} // namespace

std::uint64_t ArchiveDefs::total_events() const {
  std::uint64_t n = 0;
  for (const auto& l : locations)
    n += l.events;
  return n;
}

long ArchiveDefs::member(std::uint32_t comm, std::uint32_t rank) const {
  auto it = comms.find(comm);
  if (it == comms.end() || rank >= it->second.members.size()) return -1;
  return it->second.members[rank];
}

void check_read(OTF2_ErrorCode rc, const std::string& what) {
  if (rc != OTF2_SUCCESS) throw input_error(what + " failed (" + format::otf2_cause(rc) + ")");
}

void check_write(OTF2_ErrorCode rc, const std::string& what) {
  if (rc != OTF2_SUCCESS) throw output_error(what + " failed (" + format::otf2_cause(rc) + ")");
}

OTF2_Reader* open_reader(const std::string& archive) {
  const std::string anchor = format::find_anchor(archive);
  const std::string damage = format::anchor_file_damage(anchor);
  if (!damage.empty()) throw input_error("'" + anchor + "': not an OTF2 archive (" + damage + ")");
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) throw input_error("'" + archive + "': not a readable OTF2 archive");
  return reader;
}

ArchiveDefs read_definitions(const std::string& archive) {
  ArchiveDefs defs;
  const format::ReaderPtr owned(open_reader(archive));
  OTF2_Reader* reader = owned.get();
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "'" + archive + "': serial reading");
  char* creator = nullptr;
  if (OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator) {
    defs.creator = creator;
    free(creator);
  }
  uint32_t nprops = 0;
  char** names = nullptr;
  if (OTF2_Reader_GetPropertyNames(reader, &nprops, &names) == OTF2_SUCCESS && names) {
    for (uint32_t i = 0; i < nprops; ++i) {
      char* value = nullptr;
      if (OTF2_Reader_GetProperty(reader, names[i], &value) == OTF2_SUCCESS && value) {
        defs.properties[names[i]] = value;
        free(value);
      }
    }
    free(names);
  }

  Collector c{&defs, {}, {}, {}, {}, {}, {}, {}};
  OTF2_GlobalDefReader* dr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!dr) throw input_error("'" + archive + "': no global definitions");
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, on_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, on_string);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cbs, on_tree_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cbs, on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, on_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, on_comm);
  OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cbs, on_location_property);
  const OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalDefCallbacks(reader, dr, cbs, &c);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  check_read(rc, "'" + archive + "': registering definition callbacks");
  uint64_t count = 0;
  check_read(OTF2_Reader_ReadAllGlobalDefinitions(reader, dr, &count),
             "'" + archive + "': reading the global definitions");
  OTF2_Reader_CloseGlobalDefReader(reader, dr);
  resolve(c);
  if (defs.locations.empty()) throw input_error("'" + archive + "': no locations defined");
  return defs;
}

} // namespace htrace::report
