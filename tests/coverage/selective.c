/* Selective tracing on 2 ranks: MPI_Pcontrol(0)/(1) around a phase, and a polling loop whose
 * MPI_Iprobe/MPI_Test calls HTRACE_MPI_EXCLUDE leaves out. Prints what it did as ground truth:
 * "rank R: iprobe N test N test_found N off_sends N" (the calls of each kind it made). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) MPI_Abort(MPI_COMM_WORLD, 2);
  const int peer = 1 - rank;
  int value = rank, got = -1;

  /* Phase 1, recorded: 3 exchanges. */
  for (int i = 0; i < 3; ++i)
    MPI_Sendrecv(&value, 1, MPI_INT, peer, 1, &got, 1, MPI_INT, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

  /* Phase 2, not recorded: 4 exchanges and a barrier. */
  MPI_Pcontrol(0);
  int off_sends = 0;
  for (int i = 0; i < 4; ++i, ++off_sends)
    MPI_Sendrecv(&value, 1, MPI_INT, peer, 2, &got, 1, MPI_INT, peer, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Pcontrol(1);

  /* Phase 3, recorded: 5 messages from rank 0 to rank 1, found by polling. Rank 0 waits for a
   * go-ahead so that rank 1's Iprobe/Test loops find nothing for a while. */
  int iprobes = 0, tests = 0, tests_found = 0;
  for (int i = 0; i < 5; ++i) {
    if (rank == 0) {
      MPI_Recv(&got, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Request req;
      MPI_Isend(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &req);
      int done = 0;
      while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        ++tests;
        tests_found += done;
      }
    } else {
      int flag = 0;
      for (int k = 0; k < 50; ++k) { /* nothing to find yet */
        MPI_Iprobe(0, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        ++iprobes;
      }
      MPI_Request req;
      MPI_Irecv(&got, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &req);
      MPI_Send(&value, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
      int done = 0;
      while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        ++tests;
        tests_found += done;
      }
    }
  }
  /* Erroneous calls on MPI_COMM_NULL (mpi4py's suite makes them on purpose): regions, but no
   * communicator records of an undefined communicator. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm null_comm = MPI_COMM_NULL, never = MPI_COMM_NULL;
  const int free_rc = MPI_Comm_free(&null_comm);
  const int dup_rc = MPI_Comm_dup(null_comm, &never);
  if (free_rc == MPI_SUCCESS || dup_rc == MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
  printf("rank %d: iprobe %d test %d test_found %d off_sends %d\n", rank, iprobes, tests,
         tests_found, off_sends);
  MPI_Finalize();
  return 0;
}
