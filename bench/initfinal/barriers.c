/* The barrier program: MPI_Init, N barriers (default 100), MPI_Finalize. Every rank prints how
 * long its MPI_Init and its MPI_Finalize took, on CLOCK_REALTIME (emulated nodes shift only
 * CLOCK_MONOTONIC): run.sh takes the slowest rank of each. A barrier right before MPI_Finalize
 * lines the ranks up, so the finalize time is the tracer's collective work, not arrival skew. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const int barriers = argc > 1 ? atoi(argv[1]) : 100;
  const double t0 = now_ms();
  MPI_Init(&argc, &argv);
  const double t1 = now_ms();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < barriers; ++i)
    MPI_Barrier(MPI_COMM_WORLD);
  const double t2 = now_ms();
  MPI_Finalize();
  const double t3 = now_ms();
  printf("initfinal rank %d init_ms %.3f finalize_ms %.3f barriers_ms %.3f\n", rank, t1 - t0,
         t3 - t2, t2 - t1);
  return 0;
}
