// The global definitions of an OTF2 archive as every htrace tool reads them: locations, location
// groups, the system tree, communicators resolved to member locations, regions with what they
// stand for, attributes, clock properties, location properties, the anchor file's properties and
// creator.
// Kept in definition order with references resolved to names; each tool derives its own view
// (htrace-correct's processes sorted by id, htrace-report's in definition order). Small: grows
// with locations, regions, communicators and attributes, never with events.
#ifndef HTRACE_FORMAT_GLOBAL_DEFS_H
#define HTRACE_FORMAT_GLOBAL_DEFS_H

#include "format/error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <otf2/otf2.h>
#include <string>
#include <vector>

namespace htrace::format {

/// What a region stands for when relating events: its paradigm and role, and the synchronization
/// it means. The one place where regions are classified.
struct RegionClass {
  OTF2_RegionRole role = OTF2_REGION_ROLE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  /// MPI_(I)neighbor_*: relates topology neighbours only, and the trace holds no topology, so its
  /// collective records carry no logical message (OTF2 has no neighborhood operation types).
  bool neighborhood = false;
  /// OpenMP synchronization the region stands for (never an MPI region). A taskgroup has role
  /// TASK_WAIT and is named "taskgroup" by htrace and Score-P: it waits for the tasks created
  /// inside it and all their descendants, where a taskwait waits for children only.
  enum class Sync : std::uint8_t { None, Barrier, Taskwait, Taskgroup };
  Sync sync = Sync::None;

  static RegionClass of(const std::string& name, OTF2_RegionRole role, OTF2_Paradigm paradigm);
  bool mpi() const { return paradigm == OTF2_PARADIGM_MPI; }
  bool openmp() const { return paradigm == OTF2_PARADIGM_OPENMP; }
};

struct RegionDef {
  std::string name;
  RegionClass cls;
};

struct SystemTreeNodeDef {
  std::string name, class_name;
  OTF2_SystemTreeNodeRef parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
};

struct LocationGroupDef {
  OTF2_LocationGroupRef id = 0;
  std::string name;
  OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_UNKNOWN;
  OTF2_SystemTreeNodeRef parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
  /// The group that created it (an accelerator context's process), if any.
  OTF2_LocationGroupRef creator = OTF2_UNDEFINED_LOCATION_GROUP;
};

struct LocationDef {
  OTF2_LocationRef id = 0;
  std::string name;
  std::uint64_t events = 0; ///< as the definitions announce them
  OTF2_LocationGroupRef group = OTF2_UNDEFINED_LOCATION_GROUP;
};

struct LocationPropertyDef {
  OTF2_LocationRef location = 0;
  std::string name;
  OTF2_Type type = OTF2_TYPE_NONE;
  OTF2_AttributeValue value{};
  /// The value if it is an integer (any width); with `doubles`, a double truncated too.
  std::optional<std::int64_t> integer(bool doubles) const;
};

struct CommDef {
  std::string name;
  bool has_group = false; ///< its group is defined (else it has no members)
  OTF2_GroupType group_type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  /// Communicator rank -> location; OTF2_UNDEFINED_LOCATION where the definitions lack it. A
  /// COMM_LOCATIONS group lists locations, every other kind indices into the COMM_LOCATIONS group
  /// of its paradigm.
  std::vector<OTF2_LocationRef> members;
};

struct AttributeDef {
  std::string name;
  OTF2_Type type = OTF2_TYPE_NONE;
};

struct ClockDef {
  bool defined = false; ///< the archive has clock properties
  std::uint64_t resolution = 0, global_offset = 0, trace_length = 0;
  std::uint64_t realtime = OTF2_UNDEFINED_TIMESTAMP;
};

struct GlobalDefs {
  ClockDef clock;
  std::map<OTF2_SystemTreeNodeRef, SystemTreeNodeDef> system_tree;
  std::vector<LocationGroupDef> location_groups;        ///< definition order
  std::vector<LocationDef> locations;                   ///< definition order
  std::vector<LocationPropertyDef> location_properties; ///< definition order
  std::map<OTF2_RegionRef, RegionDef> regions;
  std::map<OTF2_CommRef, CommDef> comms;
  std::map<OTF2_AttributeRef, AttributeDef> attributes;
  std::map<std::string, std::string> archive_properties; ///< the anchor file's
  std::string creator;

  /// The compute node below which a location group with system-tree parent `parent` runs: the
  /// nearest ancestor of class "node" (htrace and Score-P write one; htrace puts a per-process
  /// node below it), else `parent` itself.
  OTF2_SystemTreeNodeRef compute_node(OTF2_SystemTreeNodeRef parent) const;
  /// The host name of such a group: in Score-P-like trees (machine -> node -> process) the name
  /// of its parent's parent, else of its parent; "" if the tree lacks the parent.
  std::string host(OTF2_SystemTreeNodeRef parent) const;
};

/// Reading the global definitions failed; `stage` says where, `cause` is OTF2's (otf2_cause).
/// The tools word the message themselves.
class GlobalDefsError : public Error {
public:
  enum class Stage { Open, Register, Read };
  GlobalDefsError(Stage stage, OTF2_ErrorCode rc, std::string cause);
  Stage stage;
  OTF2_ErrorCode rc;
  std::string cause;
};

/// Reads the anchor file's properties and creator and the global definitions through `reader`
/// (serial or MPI-collective: every process of a collective reader calls this). Throws
/// GlobalDefsError when OTF2 fails; an archive without locations is the caller's to judge.
GlobalDefs read_global_defs(OTF2_Reader* reader);

} // namespace htrace::format
#endif
