/* fidelity_pingpong: 0-byte ping-pong between world ranks 0 and 1 (other ranks only initialize and
 * finalize). On one host the trace is consistent by construction: both ranks read the same clock,
 * so a correction must leave it as it is.
 *
 * usage: fidelity_pingpong MESSAGES   (MESSAGES / 2 round trips) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long messages = argc > 1 ? atol(argv[1]) : 1000000;
  if (size < 2 || messages < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 fidelity_pingpong MESSAGES (>= 2)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (long i = 0; i < messages / 2 && rank < 2; ++i) {
    if (rank == 0) {
      MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("fidelity_pingpong: %ld messages\n", messages / 2 * 2);
  MPI_Finalize();
  return 0;
}
