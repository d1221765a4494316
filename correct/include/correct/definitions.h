// The global definitions htrace-correct needs to interpret events: locations, processes,
// communicators and their members, region roles, clock measurements. Read once by every
// correction process (global definitions are small).
#ifndef HTRACE_CORRECT_DEFINITIONS_H
#define HTRACE_CORRECT_DEFINITIONS_H

#include <cstdint>
#include <map>
#include <otf2/otf2.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace htrace::correct {

struct LocationInfo {
  OTF2_LocationRef id = 0;
  uint32_t process = 0; // index into Definitions::processes
  uint64_t declared_events = 0;
  std::string name;
  // Pre-synchronization measurements (htrace location properties), when present.
  bool has_init = false, has_final = false;
  int64_t init_time = 0, init_offset = 0, final_time = 0, final_offset = 0;
  int64_t init_uncertainty = 0, final_uncertainty = 0; // ns; 0 when not recorded
};

struct ProcessInfo {
  OTF2_LocationGroupRef id = 0;
  uint64_t node = 0; // system-tree node of class "node" (else the parent): intra-node latency
  std::vector<uint32_t> locations; // indices into Definitions::locations, ascending id
  uint64_t events = 0;
};

struct CommInfo {
  std::vector<uint32_t> rank_process; // communicator rank -> process index (UINT32_MAX unknown)
  std::unordered_map<uint32_t, uint32_t> process_rank;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
};

struct RegionInfo {
  OTF2_RegionRole role = OTF2_REGION_ROLE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  /// MPI_(I)neighbor_*: relates topology neighbours only, and the trace holds no topology, so its
  /// collective records carry no logical message (OTF2 has no neighborhood operation types).
  bool neighborhood = false;
  /// OpenMP synchronization the region stands for (never an MPI region). A taskgroup has role
  /// TASK_WAIT and is named "taskgroup" by htrace and Score-P: it waits for the tasks created
  /// inside it and all their descendants, where a taskwait waits for children only.
  enum class Sync : uint8_t { None, Barrier, Taskwait, Taskgroup };
  Sync sync = Sync::None;
};

struct Definitions {
  std::vector<LocationInfo> locations; // sorted by id
  std::vector<ProcessInfo> processes;  // sorted by id
  std::unordered_map<OTF2_LocationRef, uint32_t> location_index;
  std::unordered_map<OTF2_CommRef, CommInfo> comms;
  // Regions by reference: dense in practice, looked up for every Enter and Leave.
  std::vector<RegionInfo> regions;
  const RegionInfo& region(OTF2_RegionRef ref) const {
    static const RegionInfo kUnknown;
    return ref < regions.size() ? regions[ref] : kUnknown;
  }
  std::map<std::string, std::string> archive_properties;
  uint64_t timer_resolution = 0, global_offset = 0, trace_length = 0;
  bool has_clock_properties = false;

  uint32_t process_of_location(OTF2_LocationRef loc) const;
};

// Reads the global definitions through an open reader. Throws std::runtime_error on failure.
Definitions read_definitions(OTF2_Reader* reader);

} // namespace htrace::correct
#endif
