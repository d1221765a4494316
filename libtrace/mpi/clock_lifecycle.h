// The tracer's clock lifecycle, called by the MPI_Init / MPI_Finalize wrappers on the tracer's
// private duplicate of MPI_COMM_WORLD after record::start(). It joins the clock library and the
// recorder: it selects the base clock, synchronizes, installs the map into the recorder and stores
// the measurements named in include/htrace/archive_properties.h.
#pragma once

#include "common/options.h"

#include <cstdint>
#include <mpi.h>

namespace htrace::mpi {

/// False (with the reason logged) when the synchronization configuration is invalid; the wrappers
/// then disable tracing for the run.
bool sync_at_init(MPI_Comm comm, const Options& options);
/// Measures the residual offsets again and stores them with the minimum latencies seen.
void measure_at_finalize(MPI_Comm comm, const Options& options);

// Measurements during the run (HTRACE_SYNC_INTERVAL_MS: fixed, or adaptive by
// clock/run_interval.h), taken by every rank together at a world collective (clock_checkpoint.h
// decides which one).

/// Nanoseconds until this rank's interval has passed (0: it has), on the base clock; -1 when
/// there are no measurements during the run.
std::int64_t run_measurement_due_in_ns(std::int64_t now_ns);
/// Collective over the tracer's world communicator: the smallest `proposal` of all ranks.
std::int64_t vote_on_run_measurement(std::int64_t proposal);
/// Collective: measures the residual offsets as at MPI_Init and stores them as the next
/// HTRACE::CLOCK::MID_<k>_*.
void measure_during_run();

struct RunMeasurementStats {
  int count = 0;             ///< measurements during the run so far
  std::int64_t spent_ns = 0; ///< this rank's time in them
  std::int64_t run_ns = 0;   ///< base clock since MPI_Init's measurement
  bool adaptive = false;     ///< the interval followed the clock
};
/// What the run summary reports (rank 0's figures: it takes part in every measurement).
RunMeasurementStats run_measurement_stats();

} // namespace htrace::mpi
