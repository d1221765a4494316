// Entry points of the clock-synchronization library used outside clock/ (the MPI_Init/Finalize
// wrappers, MPIX_Harmonize, htrace-clockcheck, htrace-bench). All MPI traffic goes through PMPI on
// the communicator given, which must be private to the caller (never a user communicator).
#pragma once

#include "clock/global_time_map.h"

#include <mpi.h>
#include <string>

namespace htrace::clock {

struct SyncOutcome {
  bool ok = false;
  std::string error; ///< names the problem when !ok (e.g. a configuration that does not parse)
  GlobalTimeMap map; ///< local base-clock ns -> global ns (reference: rank 0 of comm)
  double duration_s = 0.0; ///< wall time the synchronization took on this rank
};

/// Synchronizes all ranks of `comm` with `config` (grammar of HTRACE_SYNC). Collective.
SyncOutcome synchronize(MPI_Comm comm, const std::string& config);

/// Global time now: clock::now() mapped through `map`.
std::int64_t global_now(const GlobalTimeMap& map);

} // namespace htrace::clock
