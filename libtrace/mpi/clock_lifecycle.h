// The tracer's clock lifecycle, called by the MPI_Init / MPI_Finalize wrappers on the tracer's
// private duplicate of MPI_COMM_WORLD after record::start(). It joins the clock library and the
// recorder: it selects the base clock, synchronizes, installs the map into the recorder and stores
// the measurements named in include/htrace/archive_properties.h.
#pragma once

#include "common/options.h"

#include <mpi.h>

namespace htrace::mpi {

/// False (with the reason logged) when the synchronization configuration is invalid; the wrappers
/// then disable tracing for the run.
bool sync_at_init(MPI_Comm comm, const Options& options);
/// Measures the residual offsets again and stores them with the minimum latencies seen.
void measure_at_finalize(MPI_Comm comm, const Options& options);

} // namespace htrace::mpi
