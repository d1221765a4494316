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
// buffers, and a fork and a join per OpenMP parallel region). The copy leaves them out, with
// records of types the installed OTF2 does not know (the team members' ThreadTeamBegin/End stay):
// its events are re-encoded through OTF2,
// every other record as it was (global ids and times: the reader applied the mapping tables and
// clock offsets, so the copy's local definition files are empty). The other definitions and the
// anchor properties are carried unchanged. The copy is for ViTE only: the original stays the
// archive of record.
#pragma once

#include <cstdint>
#include <string>

namespace htrace::report {

struct ViteCopy {
  unsigned rewritten_groups = 0;     ///< communicator groups written as location lists
  std::uint64_t buffer_flushes = 0;  ///< BufferFlush records left out
  std::uint64_t thread_forks = 0;    ///< ThreadFork records left out
  std::uint64_t thread_joins = 0;    ///< ThreadJoin records left out
  std::uint64_t unknown_records = 0; ///< records of types OTF2 does not know, left out
};

/// Writes the ViTE copy of `archive` to the new directory `out` (must not exist): built beside
/// it and renamed into place when complete. Throws std::runtime_error on failure (nothing is
/// left behind).
ViteCopy write_vite_copy(const std::string& archive, const std::string& out);

} // namespace htrace::report
