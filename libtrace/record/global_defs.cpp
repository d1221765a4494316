#include "record/global_defs.h"

#include "htrace/archive_properties.h"

#include <map>
#include <otf2/otf2.h>

namespace htrace::record {
namespace {

OTF2_Paradigm otf2_paradigm(Paradigm p) {
  switch (p) {
  case Paradigm::Mpi:
    return OTF2_PARADIGM_MPI;
  case Paradigm::OpenMp:
    return OTF2_PARADIGM_OPENMP;
  case Paradigm::Measurement:
    return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
  case Paradigm::User:
    return OTF2_PARADIGM_USER;
  }
  return OTF2_PARADIGM_UNKNOWN;
}

OTF2_RegionRole otf2_role(RegionRole r) {
  switch (r) {
  case RegionRole::Function:
    return OTF2_REGION_ROLE_FUNCTION;
  case RegionRole::Wrapper:
    return OTF2_REGION_ROLE_WRAPPER;
  case RegionRole::PointToPoint:
    return OTF2_REGION_ROLE_POINT2POINT;
  case RegionRole::Collective:
    return OTF2_REGION_ROLE_COLL_OTHER;
  case RegionRole::Barrier:
    return OTF2_REGION_ROLE_BARRIER;
  case RegionRole::ImplicitBarrier:
    return OTF2_REGION_ROLE_IMPLICIT_BARRIER;
  case RegionRole::Parallel:
    return OTF2_REGION_ROLE_PARALLEL;
  case RegionRole::Loop:
    return OTF2_REGION_ROLE_LOOP;
  case RegionRole::Sections:
    return OTF2_REGION_ROLE_SECTIONS;
  case RegionRole::Single:
    return OTF2_REGION_ROLE_SINGLE;
  case RegionRole::Master:
    return OTF2_REGION_ROLE_MASTER;
  case RegionRole::Critical:
    return OTF2_REGION_ROLE_CRITICAL;
  case RegionRole::Atomic:
    return OTF2_REGION_ROLE_ATOMIC;
  case RegionRole::Flush:
    return OTF2_REGION_ROLE_FLUSH;
  case RegionRole::Task:
    return OTF2_REGION_ROLE_TASK;
  case RegionRole::TaskWait:
    return OTF2_REGION_ROLE_TASK_WAIT;
  case RegionRole::TaskCreate:
    return OTF2_REGION_ROLE_TASK_CREATE;
  case RegionRole::Ordered:
    return OTF2_REGION_ROLE_ORDERED;
  case RegionRole::Artificial:
    return OTF2_REGION_ROLE_ARTIFICIAL;
  }
  return OTF2_REGION_ROLE_UNKNOWN;
}

const char* source_file(Paradigm p) {
  switch (p) {
  case Paradigm::Mpi:
    return "MPI"; // Scalasca classifies MPI regions by this file name
  case Paradigm::OpenMp:
    return "OpenMP";
  default:
    return "";
  }
}

/// Global string table: each distinct string defined once, in first-use order.
class Strings {
public:
  explicit Strings(OTF2_GlobalDefWriter* w) : w_(w) {}
  OTF2_StringRef operator()(const std::string& s) {
    auto [it, inserted] = ids_.emplace(s, static_cast<OTF2_StringRef>(ids_.size()));
    if (inserted && rc == OTF2_SUCCESS)
      rc = OTF2_GlobalDefWriter_WriteString(w_, it->second, s.c_str());
    return it->second;
  }
  OTF2_ErrorCode rc = OTF2_SUCCESS;

private:
  OTF2_GlobalDefWriter* w_;
  std::map<std::string, OTF2_StringRef> ids_;
};

std::string failed(const char* what, OTF2_ErrorCode rc) {
  return std::string(what) + " failed: " + OTF2_Error_GetName(rc) + " (" +
         OTF2_Error_GetDescription(rc) + ")";
}

} // namespace

std::string write_global_definitions(OTF2_Archive_struct* archive_handle,
                                     const std::vector<RankDefs>& all, const Unified& u,
                                     const ClockInfo& clock, const RmaIoGlobal* rma_io) {
  auto* archive = reinterpret_cast<OTF2_Archive*>(archive_handle);
  OTF2_GlobalDefWriter* w = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!w) return "creating the global definition writer failed";
  OTF2_ErrorCode rc = OTF2_GlobalDefWriter_WriteClockProperties(
      w, 1000000000, clock.global_offset, clock.trace_length, clock.realtime_at_offset);
  if (rc != OTF2_SUCCESS) return failed("writing ClockProperties", rc);
  Strings str(w);
#define HTRACE_CHECK(call, what)                                                                   \
  do {                                                                                             \
    if ((rc = (call)) != OTF2_SUCCESS) return failed(what, rc);                                    \
    if (str.rc != OTF2_SUCCESS) return failed("writing a string", str.rc);                         \
  } while (0)

  // System tree: machine -> one node per host name -> one process per rank.
  const OTF2_SystemTreeNodeRef machine = 0;
  HTRACE_CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(w, machine, str("machine"), str("machine"),
                                                        OTF2_UNDEFINED_SYSTEM_TREE_NODE),
               "writing the system tree");
  std::map<std::string, OTF2_SystemTreeNodeRef> nodes;
  OTF2_SystemTreeNodeRef next_node = 1;
  for (const auto& d : all) {
    if (nodes.count(d.host)) continue;
    nodes[d.host] = next_node;
    HTRACE_CHECK(
        OTF2_GlobalDefWriter_WriteSystemTreeNode(w, next_node++, str(d.host), str("node"), machine),
        "writing the system tree");
  }
  for (const auto& d : all) {
    const OTF2_SystemTreeNodeRef process = next_node++;
    const std::string name = "MPI Rank " + std::to_string(d.rank);
    HTRACE_CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(w, process, str(name), str("process"),
                                                          nodes[d.host]),
                 "writing the system tree");
    HTRACE_CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(w, d.rank, str(name),
                                                         OTF2_LOCATION_GROUP_TYPE_PROCESS, process,
                                                         OTF2_UNDEFINED_LOCATION_GROUP),
                 "writing a location group");
  }
  for (const auto& d : all) {
    for (const auto& loc : d.locations) {
      const std::uint64_t index = loc.id >> 32;
      const std::string name = index == 0 ? "Master thread" : "Thread " + std::to_string(index);
      HTRACE_CHECK(OTF2_GlobalDefWriter_WriteLocation(
                       w, loc.id, str(name), OTF2_LOCATION_TYPE_CPU_THREAD, loc.events, d.rank),
                   "writing a location");
    }
  }

  for (std::size_t i = 0; i < u.regions.size(); ++i) {
    const RegionDef& r = u.regions[i];
    const OTF2_StringRef name = str(r.name);
    HTRACE_CHECK(OTF2_GlobalDefWriter_WriteRegion(w, i, name, name, str(""), otf2_role(r.role),
                                                  otf2_paradigm(r.paradigm), OTF2_REGION_FLAG_NONE,
                                                  str(source_file(r.paradigm)), 0, 0),
                 "writing a region");
  }

  HTRACE_CHECK(OTF2_GlobalDefWriter_WriteAttribute(
                   w, kPollsAttribute, str(HTRACE_ATTR_POLLS),
                   str("unsuccessful tests or probes on the same arguments this call stands for"),
                   OTF2_TYPE_UINT64),
               "writing an attribute");

  for (std::size_t i = 0; i < u.groups.size(); ++i) {
    const GlobalGroup& g = u.groups[i];
    const bool omp = g.kind == GroupKind::OmpLocations || g.kind == GroupKind::OmpTeam;
    const bool locations = g.kind == GroupKind::MpiLocations || g.kind == GroupKind::OmpLocations;
    const char* name = locations ? (omp ? "OpenMP locations" : "MPI locations") : "";
    HTRACE_CHECK(OTF2_GlobalDefWriter_WriteGroup(
                     w, i, str(name),
                     locations ? OTF2_GROUP_TYPE_COMM_LOCATIONS : OTF2_GROUP_TYPE_COMM_GROUP,
                     omp ? OTF2_PARADIGM_OPENMP : OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                     static_cast<std::uint32_t>(g.members.size()), g.members.data()),
                 "writing a group");
  }

  for (std::size_t i = 0; i < u.comms.size(); ++i) {
    const GlobalComm& c = u.comms[i];
    const OTF2_CommRef parent = c.parent == kNoComm ? OTF2_UNDEFINED_COMM : c.parent;
    if (c.remote_group != kNoComm) {
      HTRACE_CHECK(OTF2_GlobalDefWriter_WriteInterComm(w, i, str(c.name), c.group, c.remote_group,
                                                       parent, OTF2_COMM_FLAG_NONE),
                   "writing an intercommunicator");
    } else {
      HTRACE_CHECK(
          OTF2_GlobalDefWriter_WriteComm(w, i, str(c.name), c.group, parent, OTF2_COMM_FLAG_NONE),
          "writing a communicator");
    }
  }

  // Windows (with their PSCW groups) and MPI-IO files and handles refer to communicators.
  if (rma_io && !rma_io->empty()) {
    const std::string error =
        write_rma_io_definitions(reinterpret_cast<OTF2_GlobalDefWriter_struct*>(w), *rma_io,
                                 [&](const std::string& s) { return str(s); });
    if (!error.empty()) return error;
    if (str.rc != OTF2_SUCCESS) return failed("writing a string", str.rc);
  }

  // Per-process measurements (clock offsets ...) on every location of that process.
  for (const auto& d : all) {
    for (const auto& p : d.process_properties) {
      OTF2_AttributeValue value;
      value.int64 = p.second;
      const OTF2_StringRef name = str(p.first);
      for (const auto& loc : d.locations)
        HTRACE_CHECK(
            OTF2_GlobalDefWriter_WriteLocationProperty(w, loc.id, name, OTF2_TYPE_INT64, value),
            "writing a location property");
    }
  }
#undef HTRACE_CHECK
  rc = OTF2_Archive_CloseGlobalDefWriter(archive, w);
  return rc == OTF2_SUCCESS ? "" : failed("closing the global definitions", rc);
}

namespace {

/// Writes `map` unless it is the identity (OTF2 returns NULL for those with optimizeSize).
OTF2_ErrorCode write_map(OTF2_DefWriter* w, OTF2_MappingType type, std::vector<std::uint32_t> map) {
  if (map.empty()) return OTF2_SUCCESS;
  for (auto& id : map)
    if (id == kNoComm) id = OTF2_UNDEFINED_UINT32;
  OTF2_IdMap* idmap = OTF2_IdMap_CreateFromUint32Array(map.size(), map.data(), true);
  if (!idmap) return OTF2_SUCCESS; // identity
  const OTF2_ErrorCode rc = OTF2_DefWriter_WriteMappingTable(w, type, idmap);
  OTF2_IdMap_Free(idmap);
  return rc;
}

} // namespace

std::string write_local_definitions(OTF2_Archive_struct* archive_handle, const RankDefs& mine,
                                    const IdMaps& maps, const RmaIoMaps* rma_io) {
  auto* archive = reinterpret_cast<OTF2_Archive*>(archive_handle);
  for (const auto& loc : mine.locations) {
    OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(archive, loc.id);
    if (!w) return "creating a local definition writer failed";
    OTF2_ErrorCode rc = write_map(w, OTF2_MAPPING_REGION, maps.regions);
    if (rc == OTF2_SUCCESS) rc = write_map(w, OTF2_MAPPING_COMM, maps.comms);
    if (rc == OTF2_SUCCESS && rma_io)
      rc = static_cast<OTF2_ErrorCode>(
          write_rma_io_maps(reinterpret_cast<OTF2_DefWriter_struct*>(w), *rma_io));
    const OTF2_ErrorCode close_rc = OTF2_Archive_CloseDefWriter(archive, w);
    if (rc != OTF2_SUCCESS) return failed("writing a mapping table", rc);
    if (close_rc != OTF2_SUCCESS) return failed("closing a local definition file", close_rc);
  }
  return "";
}

} // namespace htrace::record
