// A parent world of 2 ranks spawns a child world of 1 and exchanges a message and a barrier with
// it over the intercommunicator; the parents also exchange a message inside their own world.
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  int rank = 0, value = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (parent == MPI_COMM_NULL) {
    if (rank == 0) {
      value = 7;
      MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm child;
    MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child,
                   MPI_ERRCODES_IGNORE);
    if (rank == 0) {
      value = 42;
      MPI_Send(&value, 1, MPI_INT, 0, 1, child);
    }
    MPI_Barrier(child);
    MPI_Comm_disconnect(&child);
    printf("parent %d: world message %d\n", rank, rank == 1 ? value : 7);
  } else {
    MPI_Recv(&value, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
    MPI_Barrier(parent);
    MPI_Comm_disconnect(&parent);
    printf("child %d: got %d\n", rank, value);
  }
  MPI_Finalize();
  return 0;
}
