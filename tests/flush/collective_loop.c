/* collective_loop: ITERS 8-byte MPI_Allreduce calls on MPI_COMM_WORLD, nothing else (no receive
 * or wait that would convert the tracer's buffer ahead). Prints what it did:
 *   DONE rank=R allreduces=N
 * usage: mpirun -np 2 collective_loop ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long iters = argc > 1 ? atol(argv[1]) : 20000;
  long in = rank + 1, out = 0, done = 0;
  for (long i = 0; i < iters; i++) {
    MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    done++;
  }
  printf("DONE rank=%d allreduces=%ld\n", rank, done);
  MPI_Finalize();
  return 0;
}
