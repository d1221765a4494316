// htrace-bench: collective-latency benchmark on the global clock (see README.md).
#include "bench_config.h"
#include "bench_run.h"
#include "report.h"

#include <mpi.h>

int main(int argc, char** argv) {
  const htrace::bench::CommandLine line = htrace::bench::parse_command_line(argc, argv);
  // compare is a serial analysis of two files, run where the files are: no MPI.
  if (line.compare)
    return line.outcome.run()
               ? htrace::bench::run_compare(line.compare_a, line.compare_b, line.compare_output)
               : htrace::cli::report(line.outcome);
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Help and usage errors come from rank 0 only, and every rank finalizes MPI before it exits.
  const int status = line.outcome.run() ? htrace::bench::run_benchmark(line.config)
                                        : htrace::cli::report(line.outcome, rank == 0);
  MPI_Finalize();
  return status;
}
