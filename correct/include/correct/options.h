// Parameters of one correction run. Defaults follow Scalasca's CLC where it has one (see README).
#ifndef HTRACE_CORRECT_OPTIONS_H
#define HTRACE_CORRECT_OPTIONS_H

#include <cstdint>
#include <string>

namespace htrace::correct {

struct Options {
  std::string input;      // archive directory or its .otf2 anchor file
  std::string output;     // new archive directory
  double gamma = 0.99999; // forward controller: share of an original interval kept after a jump
  int64_t delta_ns = 1;   // minimum spacing of consecutive events of one location
  double slope = 0.01;    // backward amortization: stretch local intervals by at most this share
  // Minimum latencies in ns; negative = take the archive's measurement, else the default below.
  int64_t lmin_intra_ns = -1;
  int64_t lmin_inter_ns = -1;
  int64_t lmin_omp_ns = -1;
  bool presync = true;            // drift interpolation from htrace's clock measurements
  bool presync_ends_only = false; // only the measurements at MPI_Init and MPI_Finalize
  // A measurement whose recorded uncertainty exceeds this is not used for pre-synchronization;
  // negative: every measurement is used (the default: the CLC repairs what an offset leaves).
  int64_t presync_max_uncertainty_ns = -1;
  bool check_only = false; // report only, write nothing
  bool json = false;
  bool force = false;
  bool progress = false; // progress display on stderr (the driver enables it on a terminal)
};

// Defaults when the archive carries no measurement (ns).
constexpr int64_t kDefaultLminMpiNs = 1000; // Scalasca's hard-coded 1 us
constexpr int64_t kDefaultLminOmpNs = 10;   // Scalasca's 10 ns for shared memory

} // namespace htrace::correct
#endif
