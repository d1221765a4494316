/* Times a loop of ITERS 8-byte MPI_Allreduce calls on MPI_COMM_WORLD, between two barriers: rank
 * 0 prints the slowest rank's loop time in ms. Used to measure what libhtrace's clock
 * measurements during the run (HTRACE_SYNC_INTERVAL_MS) add to a collective-bound program.
 * usage: clocksync_collective_timer ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts); /* not CLOCK_MONOTONIC: the emulated nodes shift that */
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long iters = argc > 1 ? atol(argv[1]) : 100000;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long in = rank, out = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_s();
  for (long i = 0; i < iters; i++)
    MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  double mine = now_s() - t0, worst = 0;
  MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("loop_ms %.3f iters %ld\n", worst * 1e3, iters);
  MPI_Finalize();
  return 0;
}
