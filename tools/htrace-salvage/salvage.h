// Rebuilds a readable OTF2 archive from what a run that ended badly left on disk: the event files
// each process flushed and its salvage files (libtrace/record/snapshot.h). Serial, no MPI.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace htrace::salvage {

// The same numbers as htrace-correct's (correct/include/correct/error.h).
enum ExitCode : int {
  kExitSuccess = 0,
  kExitUsage = 2,
  kExitInput = 3,    // IN is not a salvageable archive (nothing written)
  kExitOutput = 4,   // OUT exists, cannot be created or written (IN untouched)
  kExitInternal = 5, // a bug
};

class Error : public std::runtime_error {
public:
  Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ExitCode code() const { return code_; }

private:
  ExitCode code_;
};

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

/// Throws Error.
Result salvage_archive(const Options& options);

} // namespace htrace::salvage
