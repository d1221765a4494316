/* failures: an MPI program that dies, for tests that a traced run never hangs.
 *
 * usage: failures abort|signal [RANK]
 *   abort   RANK calls MPI_Abort(MPI_COMM_WORLD, 5) after some traffic; the others wait in a
 * barrier signal  RANK raises SIGSEGV after some traffic; the others wait in a barrier RANK
 * defaults to 1. Exchanges a few messages first so that the tracer has events to keep. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  int victim = argc > 2 ? atoi(argv[2]) : 1;
  if ((strcmp(mode, "abort") != 0 && strcmp(mode, "signal") != 0) || victim < 0 || victim >= size) {
    if (rank == 0) fprintf(stderr, "usage: failures abort|signal [RANK < %d]\n", size);
    MPI_Finalize();
    return 2;
  }
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int i = 0; i < 10; i++) {
    int out = i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  }
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == victim) {
    fprintf(stderr, "failures: rank %d: %s now\n", rank, mode);
    if (mode[0] == 'a')
      MPI_Abort(MPI_COMM_WORLD, 5);
    else
      raise(SIGSEGV);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* never completes: the victim is gone */
  MPI_Finalize();
  return 0;
}
