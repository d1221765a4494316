#include "format/global_defs.h"

#include "format/otf2_library.h"

#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

namespace htrace::format {
namespace {

struct RawGroup {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  std::vector<std::uint64_t> members;
};

/// Definitions as OTF2 delivers them; groups and communicators are resolved once all are read.
struct Collector {
  GlobalDefs* defs;
  std::unordered_map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_GroupRef, RawGroup> groups;
  std::map<OTF2_CommRef, std::pair<std::string, OTF2_GroupRef>> comms; // name, group

  const std::string& str(OTF2_StringRef ref) { return strings[ref]; }
};

Collector& of(void* user) {
  return *static_cast<Collector*>(user);
}

OTF2_CallbackCode on_string(void* u, OTF2_StringRef self, const char* s) {
  of(u).strings[self] = s ? s : "";
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_clock(void* u, uint64_t resolution, uint64_t offset, uint64_t length,
                           uint64_t realtime) {
  of(u).defs->clock = {true, resolution, offset, length, realtime};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_system_tree_node(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
                                      OTF2_StringRef class_name, OTF2_SystemTreeNodeRef parent) {
  Collector& c = of(u);
  c.defs->system_tree[self] = {c.str(name), c.str(class_name), parent};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location_group(void* u, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                    OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                    OTF2_LocationGroupRef creator) {
  Collector& c = of(u);
  c.defs->location_groups.push_back({self, c.str(name), type, parent, creator});
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location(void* u, OTF2_LocationRef self, OTF2_StringRef name,
                              OTF2_LocationType, uint64_t events, OTF2_LocationGroupRef group) {
  Collector& c = of(u);
  c.defs->locations.push_back({self, c.str(name), events, group});
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                            OTF2_StringRef, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                            OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
  Collector& c = of(u);
  const std::string& n = c.str(name);
  c.defs->regions[self] = {n, RegionClass::of(n, role, paradigm)};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_group(void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                           OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t n,
                           const uint64_t* members) {
  of(u).groups[self] = {type, paradigm, std::vector<std::uint64_t>(members, members + n)};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_comm(void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                          OTF2_CommRef, OTF2_CommFlag) {
  Collector& c = of(u);
  c.comms[self] = {c.str(name), group};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_attribute(void* u, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef,
                               OTF2_Type type) {
  Collector& c = of(u);
  c.defs->attributes[self] = {c.str(name), type};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location_property(void* u, OTF2_LocationRef location, OTF2_StringRef name,
                                       OTF2_Type type, OTF2_AttributeValue value) {
  Collector& c = of(u);
  c.defs->location_properties.push_back({location, c.str(name), type, value});
  return OTF2_CALLBACK_SUCCESS;
}

// Communicator members: a COMM_LOCATIONS group lists locations, every other group indices into
// the COMM_LOCATIONS group of its paradigm (the last one defined, should there be several).
void resolve_comms(const Collector& c, GlobalDefs& d) {
  std::map<OTF2_Paradigm, const RawGroup*> comm_locations;
  for (const auto& [ref, g] : c.groups)
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) comm_locations[g.paradigm] = &g;
  for (const auto& [ref, named] : c.comms) {
    CommDef comm;
    comm.name = named.first;
    auto git = c.groups.find(named.second);
    if (git != c.groups.end()) {
      const RawGroup& g = git->second;
      comm.has_group = true;
      comm.group_type = g.type;
      comm.paradigm = g.paradigm;
      auto base = comm_locations.find(g.paradigm);
      for (std::uint64_t m : g.members) {
        if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS)
          comm.members.push_back(m);
        else if (base != comm_locations.end() && m < base->second->members.size())
          comm.members.push_back(base->second->members[m]);
        else
          comm.members.push_back(OTF2_UNDEFINED_LOCATION);
      }
    }
    d.comms[ref] = std::move(comm);
  }
}

void read_anchor_properties(OTF2_Reader* reader, GlobalDefs& d) {
  char* creator = nullptr;
  if (OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator) {
    d.creator = creator;
    std::free(creator);
  }
  uint32_t count = 0;
  char** names = nullptr;
  if (OTF2_Reader_GetPropertyNames(reader, &count, &names) != OTF2_SUCCESS || !names) return;
  for (uint32_t i = 0; i < count; ++i) {
    char* value = nullptr;
    if (OTF2_Reader_GetProperty(reader, names[i], &value) == OTF2_SUCCESS && value) {
      d.archive_properties[names[i]] = value;
      std::free(value);
    }
  }
  std::free(names);
}

} // namespace

RegionClass RegionClass::of(const std::string& name, OTF2_RegionRole role, OTF2_Paradigm paradigm) {
  RegionClass c;
  c.role = role;
  c.paradigm = paradigm;
  c.neighborhood = name.rfind("MPI_Neighbor_", 0) == 0 || name.rfind("MPI_Ineighbor_", 0) == 0;
  if (paradigm != OTF2_PARADIGM_MPI) {
    if (role == OTF2_REGION_ROLE_BARRIER || role == OTF2_REGION_ROLE_IMPLICIT_BARRIER)
      c.sync = Sync::Barrier;
    else if (role == OTF2_REGION_ROLE_TASK_WAIT)
      c.sync = name.find("taskgroup") != std::string::npos ? Sync::Taskgroup : Sync::Taskwait;
  }
  return c;
}

std::optional<std::int64_t> LocationPropertyDef::integer(bool doubles) const {
  switch (type) {
  case OTF2_TYPE_INT64:
    return value.int64;
  case OTF2_TYPE_UINT64:
    return static_cast<std::int64_t>(value.uint64);
  case OTF2_TYPE_INT32:
    return value.int32;
  case OTF2_TYPE_UINT32:
    return value.uint32;
  case OTF2_TYPE_DOUBLE:
    if (doubles) return static_cast<std::int64_t>(value.float64);
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

OTF2_SystemTreeNodeRef GlobalDefs::compute_node(OTF2_SystemTreeNodeRef parent) const {
  std::unordered_set<OTF2_SystemTreeNodeRef> seen; // a malformed tree may contain a cycle
  for (OTF2_SystemTreeNodeRef n = parent;
       n != OTF2_UNDEFINED_SYSTEM_TREE_NODE && seen.insert(n).second;) {
    auto it = system_tree.find(n);
    if (it == system_tree.end()) break;
    if (it->second.class_name == "node" || it->second.class_name == "Node") return n;
    n = it->second.parent;
  }
  return parent;
}

std::string GlobalDefs::host(OTF2_SystemTreeNodeRef parent) const {
  auto n = system_tree.find(parent);
  if (n == system_tree.end()) return "";
  auto up = system_tree.find(n->second.parent);
  return up != system_tree.end() && n->second.parent != OTF2_UNDEFINED_SYSTEM_TREE_NODE
             ? up->second.name
             : n->second.name;
}

GlobalDefsError::GlobalDefsError(Stage stage_, OTF2_ErrorCode rc_, std::string cause_)
    : Error(ErrorKind::Input, "reading the global definitions failed (" + cause_ + ")"),
      stage(stage_), rc(rc_), cause(std::move(cause_)) {}

GlobalDefs read_global_defs(OTF2_Reader* reader) {
  GlobalDefs defs;
  read_anchor_properties(reader, defs);
  Collector c{&defs, {}, {}, {}};
  OTF2_GlobalDefReader* dr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!dr) throw GlobalDefsError(GlobalDefsError::Stage::Open, OTF2_SUCCESS, "no reader");
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
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cbs, on_attribute);
  const OTF2_ErrorCode registered = OTF2_Reader_RegisterGlobalDefCallbacks(reader, dr, cbs, &c);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  // The cause is taken before the definition reader is closed (closing may say more).
  const auto fail = [&](GlobalDefsError::Stage stage, OTF2_ErrorCode rc) {
    GlobalDefsError error(stage, rc, otf2_cause(rc));
    OTF2_Reader_CloseGlobalDefReader(reader, dr);
    return error;
  };
  if (registered != OTF2_SUCCESS) throw fail(GlobalDefsError::Stage::Register, registered);
  uint64_t count = 0;
  const OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader, dr, &count);
  if (rc != OTF2_SUCCESS) throw fail(GlobalDefsError::Stage::Read, rc);
  OTF2_Reader_CloseGlobalDefReader(reader, dr);
  resolve_comms(c, defs);
  return defs;
}

} // namespace htrace::format
