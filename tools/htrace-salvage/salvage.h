// Rebuilds a readable OTF2 archive from what a run that ended badly left on disk: the event files
// each process flushed and its salvage files (libtrace/record/snapshot.h). Serial, no MPI.
#pragma once

#include "format/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::salvage {

struct Options {
  std::string input;  ///< the archive directory of the failed run (never modified)
  std::string output; ///< the new archive directory (written under a temporary name, renamed)
};

/// What was salvaged, per rank and location.
struct Result {
  struct Location {
    std::uint64_t id = 0;
    std::uint64_t events = 0;  ///< copied from the event file
    std::uint64_t closed = 0;  ///< regions left open, closed at the last recorded time
    std::uint64_t missing = 0; ///< events of a chunk written in part that are not whole (lost)
    bool file_damaged = false; ///< the event file ended inside a chunk (reading stopped)
    std::string damage;        ///< why, when file_damaged
  };
  struct Rank {
    int rank = 0;
    bool finished = false; ///< reached MPI_Finalize
    bool has_definitions = false;
    std::string end; ///< how the process ended, as recorded (or "killed (no end recorded)")
    std::vector<Location> locations;
  };
  std::vector<Rank> ranks;
  std::uint64_t unknown_records = 0; ///< event records of kinds htrace does not write (dropped)
};

/// Throws htrace::Error (its exit code: format/error.h).
Result salvage_archive(const Options& options);

} // namespace htrace::salvage
