// One correction run: open IN, read the owned locations, replay, rewrite OUT atomically, report.
#ifndef HTRACE_CORRECT_ENGINE_H
#define HTRACE_CORRECT_ENGINE_H

#include "correct/options.h"
#include "correct/rank_group.h"
#include "correct/report.h"
#include "format/error.h"

#include <mpi.h>

namespace htrace::correct {

// Collective over `comm`. Throws an Error (format/error.h) of the same kind and message on every
// rank (agreed); anything else (std::bad_alloc) is rank-local.
Report correct_archive(const Options& options, MPI_Comm comm);
// The same over `ranks`: a SerialRankGroup (rank_group.h) runs without MPI, which need not even
// be initialized; ranks of more than one process must be MPI's (OTF2's collectives run over it).
Report correct_archive(const Options& options, RankGroup& ranks);

} // namespace htrace::correct
#endif
