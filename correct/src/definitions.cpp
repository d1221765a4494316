#include "correct/definitions.h"

#include "htrace/archive_properties.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

namespace htrace::correct {
namespace {

struct RawGroup {
  OTF2_GroupType type;
  OTF2_Paradigm paradigm;
  std::vector<uint64_t> members;
};
struct RawComm {
  OTF2_GroupRef group;
};
struct RawLocationGroup {
  OTF2_LocationGroupType type;
  OTF2_SystemTreeNodeRef parent;
};
struct RawSystemTreeNode {
  OTF2_StringRef class_name;
  OTF2_SystemTreeNodeRef parent;
};
struct RawLocation {
  std::string name;
  uint64_t events;
  OTF2_LocationGroupRef group;
};

struct Collector {
  std::unordered_map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_LocationGroupRef, RawLocationGroup> location_groups;
  std::unordered_map<OTF2_SystemTreeNodeRef, RawSystemTreeNode> system_tree;
  std::map<OTF2_LocationRef, RawLocation> locations;
  std::unordered_map<OTF2_GroupRef, RawGroup> groups;
  std::map<OTF2_CommRef, RawComm> comms;
  std::vector<std::tuple<OTF2_LocationRef, std::string, OTF2_Type, OTF2_AttributeValue>>
      location_props;
  Definitions* out;
};

OTF2_CallbackCode on_string(void* u, OTF2_StringRef self, const char* s) {
  static_cast<Collector*>(u)->strings[self] = s ? s : "";
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_clock(void* u, uint64_t res, uint64_t off, uint64_t len, uint64_t) {
  Definitions* d = static_cast<Collector*>(u)->out;
  d->timer_resolution = res;
  d->global_offset = off;
  d->trace_length = len;
  d->has_clock_properties = true;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_system_tree_node(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef,
                                      OTF2_StringRef class_name, OTF2_SystemTreeNodeRef parent) {
  static_cast<Collector*>(u)->system_tree[self] = {class_name, parent};
  return OTF2_CALLBACK_SUCCESS;
}
// The compute node of a process: the nearest system-tree ancestor of class "node" (htrace and
// Score-P write one; htrace puts a per-process node below it), else the group's direct parent.
uint64_t node_of(const Collector& c, OTF2_SystemTreeNodeRef parent) {
  std::unordered_set<OTF2_SystemTreeNodeRef> seen; // a malformed tree may contain a cycle
  for (OTF2_SystemTreeNodeRef n = parent;
       n != OTF2_UNDEFINED_SYSTEM_TREE_NODE && seen.insert(n).second;) {
    auto it = c.system_tree.find(n);
    if (it == c.system_tree.end()) break;
    auto cls = c.strings.find(it->second.class_name);
    if (cls != c.strings.end() && (cls->second == "node" || cls->second == "Node")) return n;
    n = it->second.parent;
  }
  return parent;
}
OTF2_CallbackCode on_location_group(void* u, OTF2_LocationGroupRef self, OTF2_StringRef,
                                    OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                    OTF2_LocationGroupRef) {
  static_cast<Collector*>(u)->location_groups[self] = {type, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* u, OTF2_LocationRef self, OTF2_StringRef name,
                              OTF2_LocationType, uint64_t events, OTF2_LocationGroupRef group) {
  auto* c = static_cast<Collector*>(u);
  c->locations[self] = {c->strings[name], events, group};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                            OTF2_StringRef, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                            OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
  auto* c = static_cast<Collector*>(u);
  const std::string& n = c->strings[name];
  const bool neighborhood = n.rfind("MPI_Neighbor_", 0) == 0 || n.rfind("MPI_Ineighbor_", 0) == 0;
  RegionInfo::Sync sync = RegionInfo::Sync::None;
  if (paradigm != OTF2_PARADIGM_MPI) {
    if (role == OTF2_REGION_ROLE_BARRIER || role == OTF2_REGION_ROLE_IMPLICIT_BARRIER)
      sync = RegionInfo::Sync::Barrier;
    else if (role == OTF2_REGION_ROLE_TASK_WAIT)
      sync = n.find("taskgroup") != std::string::npos ? RegionInfo::Sync::Taskgroup
                                                      : RegionInfo::Sync::Taskwait;
  }
  // References are indices in every writer we know; a sparse outlier is ignored rather than
  // allocated for (its region then counts as an ordinary function).
  if (self < (1u << 24)) {
    if (self >= c->out->regions.size()) c->out->regions.resize(self + 1);
    c->out->regions[self] = {role, paradigm, neighborhood, sync};
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_group(void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                           OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t n,
                           const uint64_t* members) {
  static_cast<Collector*>(u)->groups[self] = {type, paradigm,
                                              std::vector<uint64_t>(members, members + n)};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_comm(void* u, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group,
                          OTF2_CommRef, OTF2_CommFlag) {
  static_cast<Collector*>(u)->comms[self] = {group};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location_property(void* u, OTF2_LocationRef loc, OTF2_StringRef name,
                                       OTF2_Type type, OTF2_AttributeValue value) {
  auto* c = static_cast<Collector*>(u);
  c->location_props.emplace_back(loc, c->strings[name], type, value);
  return OTF2_CALLBACK_SUCCESS;
}

int64_t property_as_int(OTF2_Type type, OTF2_AttributeValue v) {
  switch (type) {
  case OTF2_TYPE_INT64:
    return v.int64;
  case OTF2_TYPE_UINT64:
    return static_cast<int64_t>(v.uint64);
  case OTF2_TYPE_INT32:
    return v.int32;
  case OTF2_TYPE_UINT32:
    return v.uint32;
  case OTF2_TYPE_DOUBLE:
    return static_cast<int64_t>(v.float64);
  default:
    return 0;
  }
}

void assemble(Collector& c, Definitions& d) {
  // Processes: location groups of type PROCESS, plus any group that owns locations.
  std::map<OTF2_LocationGroupRef, uint32_t> process_index;
  std::unordered_set<OTF2_LocationGroupRef> used;
  for (auto& [id, loc] : c.locations)
    used.insert(loc.group);
  for (auto& [id, g] : c.location_groups)
    if (used.count(id)) {
      process_index[id] = static_cast<uint32_t>(d.processes.size());
      d.processes.push_back({id, node_of(c, g.parent), {}, 0});
    }
  for (auto& [id, loc] : c.locations) {
    auto it = process_index.find(loc.group);
    if (it == process_index.end()) {
      process_index[loc.group] = static_cast<uint32_t>(d.processes.size());
      d.processes.push_back({loc.group, 0, {}, 0});
      it = process_index.find(loc.group);
    }
    LocationInfo li;
    li.id = id;
    li.process = it->second;
    li.declared_events = loc.events;
    li.name = loc.name;
    d.location_index[id] = static_cast<uint32_t>(d.locations.size());
    d.processes[li.process].locations.push_back(static_cast<uint32_t>(d.locations.size()));
    d.processes[li.process].events += loc.events;
    d.locations.push_back(li);
  }
  // Communicators: COMM_GROUP members index the COMM_LOCATIONS group of the same paradigm.
  std::unordered_map<int, const RawGroup*> comm_locations;
  for (auto& [id, g] : c.groups)
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) comm_locations[g.paradigm] = &g;
  for (auto& [id, comm] : c.comms) {
    auto git = c.groups.find(comm.group);
    if (git == c.groups.end()) continue;
    const RawGroup& g = git->second;
    CommInfo ci;
    ci.paradigm = g.paradigm;
    const RawGroup* base = comm_locations.count(g.paradigm) ? comm_locations[g.paradigm] : nullptr;
    auto member_location = [&](uint64_t m) -> OTF2_LocationRef {
      if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) return m;
      if (base && m < base->members.size()) return base->members[m];
      return OTF2_UNDEFINED_LOCATION;
    };
    for (uint64_t m : g.members) {
      uint32_t p = d.process_of_location(member_location(m));
      ci.process_rank.emplace(p, static_cast<uint32_t>(ci.rank_process.size()));
      ci.rank_process.push_back(p);
    }
    d.comms[id] = std::move(ci);
  }
  for (auto& [loc, name, type, value] : c.location_props) {
    auto it = d.location_index.find(loc);
    if (it == d.location_index.end()) continue;
    LocationInfo& li = d.locations[it->second];
    int64_t v = property_as_int(type, value);
    if (name == HTRACE_LPROP_INIT_TIME)
      li.init_time = v, li.has_init = true;
    else if (name == HTRACE_LPROP_INIT_OFFSET)
      li.init_offset = v;
    else if (name == HTRACE_LPROP_FINAL_TIME)
      li.final_time = v, li.has_final = true;
    else if (name == HTRACE_LPROP_FINAL_OFFSET)
      li.final_offset = v;
    else if (name == HTRACE_LPROP_INIT_UNCERTAINTY)
      li.init_uncertainty = v;
    else if (name == HTRACE_LPROP_FINAL_UNCERTAINTY)
      li.final_uncertainty = v;
    else if (name == HTRACE_LPROP_CLOCK_DOMAIN && v >= 0)
      li.clock_domain = v;
  }
  // A process is in a domain when all its locations say so (htrace writes the same on each).
  for (ProcessInfo& p : d.processes) {
    int64_t domain = LocationInfo::kNoClockDomain;
    for (size_t k = 0; k < p.locations.size(); ++k) {
      const int64_t v = d.locations[p.locations[k]].clock_domain;
      if (k == 0) domain = v;
      if (v != domain) domain = LocationInfo::kNoClockDomain;
    }
    p.clock_domain = domain;
  }
}

} // namespace

uint32_t Definitions::process_of_location(OTF2_LocationRef loc) const {
  auto it = location_index.find(loc);
  return it == location_index.end() ? UINT32_MAX : locations[it->second].process;
}

Definitions read_definitions(OTF2_Reader* reader) {
  Definitions d;
  Collector c;
  c.out = &d;
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!gdr) throw std::runtime_error("cannot open the global definitions");
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, on_string);
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, on_clock);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cbs, on_system_tree_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cbs, on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, on_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, on_comm);
  OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cbs, on_location_property);
  OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, cbs, &c);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  uint64_t n = 0;
  OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n);
  OTF2_Reader_CloseGlobalDefReader(reader, gdr);
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string("corrupt global definitions: ") +
                             OTF2_Error_GetDescription(rc));
  assemble(c, d);
  if (d.locations.empty()) throw std::runtime_error("the archive defines no locations");
  uint32_t count = 0;
  char** names = nullptr;
  if (OTF2_Reader_GetPropertyNames(reader, &count, &names) == OTF2_SUCCESS) {
    for (uint32_t i = 0; i < count; ++i) {
      char* value = nullptr;
      if (OTF2_Reader_GetProperty(reader, names[i], &value) == OTF2_SUCCESS && value) {
        d.archive_properties[names[i]] = value;
        free(value);
      }
    }
    free(names);
  }
  return d;
}

} // namespace htrace::correct
