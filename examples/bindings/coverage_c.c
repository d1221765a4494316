/* The reference program of examples/bindings: the same MPI calls, in the same order, as
 * coverage_mpif.f90 (mpif.h), coverage_usempi.f90 (use mpi) and coverage_f08.f90 (use mpi_f08),
 * so that their traces can be compared record by record (tests/coverage/bindings_check.py).
 * Ring neighbours on a duplicate of MPI_COMM_WORLD: named communicator, Sendrecv, Isend/Irecv +
 * Waitall, polling with Iprobe/Test, Allreduce in place, Alltoallw with datatype arrays, a derived
 * datatype with an MPI_Aint stride, MPI_Pcontrol around a barrier, one-sided Put between fences,
 * MPI-IO write at an MPI_Offset, file delete. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm ring;
  MPI_Comm_dup(MPI_COMM_WORLD, &ring);
  MPI_Comm_set_name(ring, "coverage ring");
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  int ints[4] = {rank, rank, rank, rank}, got[4];
  MPI_Sendrecv(ints, 4, MPI_INT, right, 7, got, 4, MPI_INT, left, 7, ring, MPI_STATUS_IGNORE);

  double out[8], in[8];
  for (int i = 0; i < 8; ++i)
    out[i] = rank + i;
  MPI_Request reqs[2];
  MPI_Irecv(in, 8, MPI_DOUBLE, left, 8, ring, &reqs[0]);
  MPI_Isend(out, 8, MPI_DOUBLE, right, 8, ring, &reqs[1]);
  MPI_Status statuses[2];
  MPI_Waitall(2, reqs, statuses);

  /* Polling: the message to the right is found by Iprobe, received by an Irecv completed by Test.
   */
  int flag = 0;
  double token = rank;
  MPI_Send(&token, 1, MPI_DOUBLE, right, 9, ring);
  while (!flag)
    MPI_Iprobe(left, 9, ring, &flag, MPI_STATUS_IGNORE);
  MPI_Request req;
  MPI_Irecv(&in[0], 1, MPI_DOUBLE, left, 9, ring, &req);
  flag = 0;
  while (!flag)
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);

  double sum = rank;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, ring);

  int sendw[64], recvw[64], counts[64], displs[64];
  MPI_Datatype types[64];
  for (int i = 0; i < size && i < 64; ++i) {
    sendw[i] = rank * 100 + i;
    counts[i] = 1;
    displs[i] = i * (int)sizeof(int);
    types[i] = MPI_INT;
  }
  MPI_Alltoallw(sendw, counts, displs, types, recvw, counts, displs, types, MPI_COMM_WORLD);

  MPI_Datatype pair;
  MPI_Type_create_hvector(2, 1, (MPI_Aint)(2 * sizeof(int)), MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_free(&pair);

  MPI_Pcontrol(0);
  MPI_Barrier(ring);
  MPI_Pcontrol(1);

  int window[4] = {0, 0, 0, 0};
  MPI_Win win;
  MPI_Win_create(window, (MPI_Aint)sizeof window, (int)sizeof(int), MPI_INFO_NULL, ring, &win);
  MPI_Win_fence(0, win);
  MPI_Put(ints, 2, MPI_INT, right, (MPI_Aint)1, 2, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);

  MPI_File fh;
  MPI_File_open(ring, "coverage.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  MPI_File_write_at(fh, (MPI_Offset)rank * 8 * (MPI_Offset)sizeof(double), out, 8, MPI_DOUBLE,
                    MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Barrier(ring);
  if (rank == 0) MPI_File_delete("coverage.dat", MPI_INFO_NULL);

  MPI_Comm_free(&ring);
  if (rank == 0) printf("coverage: sum %g window %d %d\n", sum, window[1], window[2]);
  MPI_Finalize();
  return 0;
}
