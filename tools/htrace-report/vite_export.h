// A copy of an archive that ViTE 1.2 (Debian's viewer) reads without a warning.
//
// OTF2 describes an MPI communicator by a COMM_GROUP group whose members are ranks, i.e. indices
// into the paradigm's COMM_LOCATIONS group; Score-P, htrace and Scalasca/Vampir use that layout.
// ViTE 1.2 keeps only COMM_LOCATIONS groups (it prints "New comm group ... Not yet implemented"
// for the others) and resolves a message's peer as members[rank] of the communicator's group, so
// on a conforming archive it warns "cannot find rank R in communicator C" for every message and
// guesses the location id from the rank. The copy rewrites each MPI COMM_GROUP as a COMM_LOCATIONS
// group with the same id whose members are the location ids in rank order; everything else (the
// other definitions, the anchor properties, every event and local definition file) is carried
// unchanged. The copy is for ViTE only: the original stays the archive of record.
#pragma once

#include <string>

namespace htrace::report {

/// Writes the ViTE copy of `archive` to the new directory `out` (must not exist): built beside
/// it and renamed into place when complete. Returns the number of rewritten groups. Throws
/// std::runtime_error on failure (nothing is left behind).
unsigned write_vite_copy(const std::string& archive, const std::string& out);

} // namespace htrace::report
