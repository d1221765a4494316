/* Times MPI_Init (and MPI_Finalize) as the application sees them: rank 0 prints the slowest
 * rank's durations in ms. Used to measure what libhtrace's clock synchronization adds. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts); /* not CLOCK_MONOTONIC: the emulated nodes shift that */
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const double t0 = now_s();
  MPI_Init(&argc, &argv);
  const double t1 = now_s();
  double mine[1] = {t1 - t0}, worst[1];
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Reduce(mine, worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  const double t2 = now_s();
  MPI_Finalize();
  const double t3 = now_s();
  if (rank == 0) printf("mpi_init_ms %.3f mpi_finalize_ms %.3f\n", worst[0] * 1e3, (t3 - t2) * 1e3);
  return 0;
}
