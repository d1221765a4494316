// Runs one experiment (operation, message size) for a time budget with the chosen process
// synchronization, timestamps every measurement on the global clock and collects them at rank 0.
#pragma once

#include "bench_config.h"
#include "clock/global_time_map.h"

#include <cstdint>
#include <mpi.h>
#include <vector>

namespace htrace::bench {

/// Per measurement, over all ranks: max end - min start, and the spread of the start times (the
/// exit skew of the synchronization: for --sync barrier, the barrier exit skew).
struct Measurement {
  std::int64_t runtime_ns = 0;
  std::int64_t exit_skew_ns = 0;
  bool valid = true; ///< every rank started on time (always true for --sync barrier)
};

struct Context {
  MPI_Comm comm = MPI_COMM_WORLD; ///< the benchmark's own duplicate of MPI_COMM_WORLD
  int rank = 0, size = 1;
  clock::GlobalTimeMap map;
  std::int64_t bcast_latency_ns = 0; ///< median broadcast + reduction round trip at rank 0
  std::int64_t spin_ns = 1000000;    ///< busy-wait (yielding) only this close to a start time
};

/// Broadcast latency estimate used by Round-Time and window start times (collective).
std::int64_t estimate_bcast_latency(MPI_Comm comm);

/// Collective; the result is filled at rank 0 only.
std::vector<Measurement> run_experiment(const Context& context, const BenchConfig& config, Op op,
                                        std::size_t bytes);

} // namespace htrace::bench
