// The global definitions of an OTF2 archive that a report needs: locations grouped into processes
// (ranks), regions, communicators resolved to member locations, clock properties, per-location
// properties and the anchor file's properties. Read once; small (grows with locations, regions and
// communicators, never with events).
#pragma once

#include "format/error.h"
#include "format/global_defs.h"

#include <cstdint>
#include <map>
#include <otf2/OTF2_Reader.h>
#include <string>
#include <vector>

namespace htrace::report {

/// A region's name and what it stands for (classified in format/global_defs.h).
using Region = format::RegionDef;

struct Location {
  std::uint64_t id = 0;
  std::string name;
  std::uint32_t process = 0;                      ///< index into ArchiveDefs::processes
  std::uint64_t events = 0;                       ///< as the definitions announce them
  std::map<std::string, std::int64_t> properties; ///< integer location properties
};

struct Process {
  std::uint64_t group_id = 0; ///< OTF2 location group id (the MPI rank for htrace archives)
  std::string name;
  std::string host;
  std::vector<std::uint32_t> locations; ///< indices into ArchiveDefs::locations
};

struct Comm {
  std::string name;
  std::vector<std::uint32_t> members; ///< comm rank -> index into ArchiveDefs::locations
  bool self = false;                  ///< MPI_COMM_SELF-like: rank 0 is the calling location
};

struct ArchiveDefs {
  std::uint64_t resolution = 1000000000; ///< ticks per second
  std::uint64_t global_offset = 0;
  std::uint64_t trace_length = 0;
  std::uint64_t realtime_ns = 0; ///< wall-clock time at global_offset, ns since the epoch
  std::vector<Location> locations;
  std::vector<Process> processes;
  std::map<std::uint64_t, std::uint32_t> location_index; ///< OTF2 id -> index
  std::map<std::uint32_t, Region> regions;               ///< OTF2 region ref -> region
  std::map<std::uint32_t, Comm> comms;                   ///< OTF2 comm ref -> communicator
  std::map<std::string, std::string> properties;         ///< anchor-file properties
  std::string creator;
  std::uint64_t total_events() const;
  /// Nanoseconds from the trace start (global_offset) to tick `t`; exact for 1 GHz clocks.
  std::int64_t ns_from_start(std::uint64_t t) const {
    const __int128 d = static_cast<__int128>(t) - static_cast<__int128>(global_offset);
    return resolution == 1000000000 ? static_cast<std::int64_t>(d)
                                    : static_cast<std::int64_t>(d * 1000000000 / resolution);
  }
  /// Location index of rank `rank` in communicator `comm`, or -1 if the definitions lack it.
  long member(std::uint32_t comm, std::uint32_t rank) const;
};

/// The report's view of the global definitions: processes are the location groups in definition
/// order (plus one per undefined group a location names), locations in definition order,
/// communicators by the locations the definitions know.
ArchiveDefs make_archive_defs(const format::GlobalDefs& defs);

/// Opens `archive` (a directory holding one .otf2 anchor file, or that file) and reads its
/// definitions; throws an input Error (format/error.h) naming the archive on failure.
ArchiveDefs read_definitions(const std::string& archive);

/// An OTF2 reader of `archive` once its anchor file is found well formed; throws an input Error
/// naming the archive otherwise. The caller closes it.
OTF2_Reader* open_reader(const std::string& archive);

/// Throw an input (reading) or output (writing) Error, "WHAT failed (OTF2's cause)", unless `rc`
/// is OTF2_SUCCESS.
void check_read(OTF2_ErrorCode rc, const std::string& what);
void check_write(OTF2_ErrorCode rc, const std::string& what);

} // namespace htrace::report
