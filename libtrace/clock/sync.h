// Entry points of the clock-synchronization library used outside clock/ (the MPI_Init/Finalize
// wrappers, MPIX_Harmonize, htrace-clockcheck, htrace-bench). All MPI traffic goes through PMPI on
// the communicator given, which must be private to the caller (never a user communicator).
#pragma once

#include "clock/global_time_map.h"
#include "common/options.h"

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

/// Tracer lifecycle hooks, called by the MPI_Init / MPI_Finalize wrappers on the tracer's private
/// duplicate of MPI_COMM_WORLD after record::start(). They select the base clock, synchronize,
/// install the map into the recorder and store the measurements named in
/// include/htrace/archive_properties.h. sync_at_init returns false (with the reason logged) when
/// the configuration is invalid; the wrappers then disable tracing for the run.
bool sync_at_init(MPI_Comm comm, const Options& options);
void measure_at_finalize(MPI_Comm comm, const Options& options);

} // namespace htrace::clock
