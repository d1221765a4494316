/* Ping-pong across emulated nodes for the traced clock test: rank i exchanges ITER messages with
 * rank (i + size/2) % size, so every pair spans two nodes whose clocks differ by seconds. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, value = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int half = size / 2, peer = (rank + half) % size;
  for (int i = 0; i < 20 && size > 1; ++i) {
    if (rank < half) {
      MPI_Send(&value, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
      MPI_Recv(&value, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&value, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++value;
      MPI_Send(&value, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
