// A copy of an archive that ViTE 1.2 (Debian's viewer) reads without a warning.
//
// OTF2 describes an MPI communicator by a COMM_GROUP group whose members are ranks, i.e. indices
// into the paradigm's COMM_LOCATIONS group; Score-P, htrace and Scalasca/Vampir use that layout.
// ViTE 1.2 keeps only COMM_LOCATIONS groups (it prints "New comm group ... Not yet implemented"
// for the others) and resolves a message's peer as members[rank] of the communicator's group, so
// on a conforming archive it warns "cannot find rank R in communicator C" for every message and
// guesses the location id from the rank. The copy rewrites each MPI COMM_GROUP as a COMM_LOCATIONS
// group with the same id whose members are the location ids in rank order.
//
// ViTE 1.2 also warns once per BufferFlush, ThreadFork and ThreadJoin record (it has no handler
// for them; the tracer writes a BufferFlush per full event buffer, ~1 per 1365 events with 64 KiB
// buffers, and a fork and a join per OpenMP parallel region), and reads only some kinds of
// definitions: the copy leaves out what vite_contents.h lists, and records of types the installed
// OTF2 does not know. Every other record is copied as it was (vite_export_events.h): where
// format/ can parse a location's event file, its kept records' bytes are copied as they are
// (local ids, the times as recorded) and its local definition file beside them unchanged, so an
// OTF2 reader of the copy applies the same mapping tables and clock offsets (the rewritten groups
// keep their ids, so records naming communicators stay right); the other locations'
// records are re-encoded through OTF2's reader and writer with global ids and times, and get
// empty local definition files. The definitions it carries and the anchor properties are
// unchanged. The copy is for ViTE only: the original stays the archive of record.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace htrace::report {

struct ViteCopy {
  unsigned rewritten_groups = 0; ///< communicator groups written as location lists
  /// What the copy leaves out, by OTF2 record kind ("BufferFlush", "MetricInstance", ...; "Metric
  /// of metric instances", and "of unknown kinds" for records this OTF2 does not know).
  std::map<std::string, std::uint64_t> records_left_out, definitions_left_out;
};

/// One line for the user: "the ViTE copy leaves out 12 records (...) and 5 definitions (...)
/// ViTE 1.2 cannot show", or "" when it left out nothing.
std::string left_out_summary(const ViteCopy& copy);

/// Writes the ViTE copy of `archive` to the new directory `out` (must not exist): built beside
/// it and renamed into place when complete. Throws std::runtime_error on failure (nothing is
/// left behind).
ViteCopy write_vite_copy(const std::string& archive, const std::string& out);

} // namespace htrace::report
