// One correction run: open IN, read the owned locations, replay, rewrite OUT atomically, report.
#ifndef HTRACE_CORRECT_ENGINE_H
#define HTRACE_CORRECT_ENGINE_H

#include "correct/options.h"
#include "correct/report.h"

#include <mpi.h>

namespace htrace::correct {

// Collective over `comm`. Throws std::runtime_error with the same message on every rank.
Report correct_archive(const Options& options, MPI_Comm comm);

} // namespace htrace::correct
#endif
