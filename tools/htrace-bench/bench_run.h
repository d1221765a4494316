// The measuring side of htrace-bench: MPI setup, global clock, shuffled experiments, output.
#pragma once

#include "bench_config.h"

namespace htrace::bench {

/// Runs every experiment of `config` on MPI_COMM_WORLD (MPI must be initialized). Returns the exit
/// code (the same on all ranks).
int run_benchmark(const BenchConfig& config);

} // namespace htrace::bench
