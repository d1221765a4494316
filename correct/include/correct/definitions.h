// The global definitions htrace-correct needs to interpret events: locations, processes,
// communicators and their members, region roles, clock measurements. Read once by every
// correction process (global definitions are small).
#ifndef HTRACE_CORRECT_DEFINITIONS_H
#define HTRACE_CORRECT_DEFINITIONS_H

#include "format/global_defs.h"

#include <cstdint>
#include <map>
#include <otf2/otf2.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace htrace::correct {

// One clock measurement htrace stored for a location (HTRACE::CLOCK::{INIT,MID_<k>,FINAL}_*).
struct ClockMeasurement {
  int64_t time = 0, offset = 0, uncertainty = 0; // ns
};

struct LocationInfo {
  OTF2_LocationRef id = 0;
  uint32_t process = 0; // index into Definitions::processes
  uint64_t declared_events = 0;
  std::string name;
  // Pre-synchronization measurements (htrace location properties), when present.
  bool has_init = false, has_final = false;
  int64_t init_time = 0, init_offset = 0, final_time = 0, final_offset = 0;
  int64_t init_uncertainty = 0, final_uncertainty = 0; // ns; 0 when not recorded
  std::vector<ClockMeasurement> during;  // MID_<k> in k order (taken during the run), if any
  int64_t clock_domain = kNoClockDomain; // HTRACE::CLOCK::DOMAIN, an opaque label
  static constexpr int64_t kNoClockDomain = -1;
};

struct ProcessInfo {
  OTF2_LocationGroupRef id = 0;
  uint64_t node = 0; // system-tree node of class "node" (else the parent): intra-node latency
  std::vector<uint32_t> locations; // indices into Definitions::locations, ascending id
  uint64_t events = 0;
  // Processes with the same known clock domain have mutually exact timestamps (htrace's
  // HTRACE::CLOCK::DOMAIN); LocationInfo::kNoClockDomain when the archive does not say.
  int64_t clock_domain = LocationInfo::kNoClockDomain;
};

struct CommInfo {
  std::vector<uint32_t> rank_process; // communicator rank -> process index (UINT32_MAX unknown)
  std::unordered_map<uint32_t, uint32_t> process_rank;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
};

// What a region stands for (format/global_defs.h classifies regions for every tool).
using RegionInfo = format::RegionClass;

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
  // Whether the timestamps of two processes come from one verified clock, so that the latency a
  // message between them shows in the trace is its true latency.
  bool share_clock(uint32_t process_a, uint32_t process_b) const {
    const int64_t a = processes[process_a].clock_domain;
    return a != LocationInfo::kNoClockDomain && a == processes[process_b].clock_domain;
  }
};

// htrace-correct's view of the global definitions: locations and processes sorted by id (a
// process is a location group that owns locations), communicators by process.
Definitions make_definitions(const format::GlobalDefs& defs);
// Reads the global definitions through an open reader (every process of a collective reader
// calls it). Throws std::runtime_error on failure.
Definitions read_definitions(OTF2_Reader* reader);

} // namespace htrace::correct
#endif
