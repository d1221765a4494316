/* Old MPI-1 C code: functions removed in MPI-3.0 (Open MPI's libmpi still exports them; mpi.h
 * declares them on request) and the MPI-2-deprecated attribute functions, each called a fixed
 * number of times (tests/coverage/legacy_check.py knows how many). Prints its results so that
 * traced and untraced runs can be compared. */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#include <mpi.h>
#include <stdio.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void on_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  printf("error handler called with %d\n", *code);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const int peer = (rank + 1) % nprocs;

  /* The first and third int of an array, built the MPI-1 way. */
  int sendbuf[3] = {10 * rank + 1, -1, 10 * rank + 3}, recvbuf[3] = {0, 0, 0};
  MPI_Aint addr[2], extent = 0, lb = 0, ub = 0;
  MPI_Address(&sendbuf[0], &addr[0]);
  MPI_Address(&sendbuf[2], &addr[1]);
  int blocklens[2] = {1, 1};
  MPI_Aint displs[2] = {0, addr[1] - addr[0]};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT}, pair, vec, idx;
  MPI_Type_struct(2, blocklens, displs, types, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_extent(pair, &extent);
  MPI_Type_lb(pair, &lb);
  MPI_Type_ub(pair, &ub);
  MPI_Type_hvector(2, 1, 8, MPI_INT, &vec);
  MPI_Type_hindexed(2, blocklens, displs, MPI_INT, &idx);
  MPI_Type_free(&vec);
  MPI_Type_free(&idx);
  MPI_Sendrecv(sendbuf, 1, pair, peer, 7, recvbuf, 1, pair, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Type_free(&pair);

  int keyval = MPI_KEYVAL_INVALID, value = 42 + rank, *got = NULL, found = 0;
  MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &keyval, NULL);
  MPI_Attr_put(MPI_COMM_WORLD, keyval, &value);
  MPI_Attr_get(MPI_COMM_WORLD, keyval, &got, &found);
  MPI_Attr_delete(MPI_COMM_WORLD, keyval);
  MPI_Keyval_free(&keyval);

  MPI_Errhandler world_errh, errh;
  MPI_Errhandler_get(MPI_COMM_WORLD, &world_errh);
  MPI_Errhandler_create(on_error, &errh);
  MPI_Errhandler_set(MPI_COMM_WORLD, errh);
  MPI_Errhandler_set(MPI_COMM_WORLD, world_errh);
  MPI_Errhandler_free(&errh);

  printf("rank %d: extent %ld lb %ld ub %ld received %d,%d attr %d found %d OK\n", rank,
         (long)extent, (long)lb, (long)ub, recvbuf[0], recvbuf[2], found ? *got : -1, found);
  MPI_Finalize();
  return 0;
}
