/* collectives: every blocking and non-blocking MPI collective once on MPI_COMM_WORLD (v/w
 * variants, reduce_scatter(_block), scan/exscan, MPI_IN_PLACE forms) and the neighbourhood
 * collectives on a periodic 1-D Cartesian communicator. Verifies results and prints one line with
 * the number of collective calls each rank made per communicator, so tests can compare with the
 * trace.
 *
 * usage: collectives */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int calls_world, calls_cart;

static void expect(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "collectives: rank %d: check failed: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

/* Runs the blocking (nonblocking == 0) or non-blocking form of every collective on WORLD. */
static void world_collectives(int nonblocking) {
  enum { kMax = 16 };
  int send[kMax], counts[kMax], displs[kMax], wcounts[kMax], wdispls[kMax];
  MPI_Datatype types[kMax];
  MPI_Request req[32];
  int n = 0;
  for (int i = 0; i < kMax; i++) {
    send[i] = rank * 100 + i;
    counts[i] = 1;
    displs[i] = i;
    wcounts[i] = 1;
    wdispls[i] = i * (int)sizeof(int);
    types[i] = MPI_INT;
  }
  int value = rank + 1, inplace[kMax];
  int scan_result = 0, exscan_result = 0, bcast_value = rank == 0 ? 7 : 0;
  int gather_buf[kMax], gatherv_buf[kMax], allgather_buf[kMax], allgatherv_buf[kMax];
  int a2a[kMax], a2av[kMax], a2aw[kMax], scatter_one = -1, scatterv_one = -1, rs = 0, rsb = 0;
  int reduce_result = 0, allreduce_result = 0;
  int rs_send[kMax];
  for (int i = 0; i < size; i++)
    rs_send[i] = i + rank;
  for (int i = 0; i < size; i++)
    inplace[i] = rank == i ? rank : -1;
  int allreduce_inplace = 1;

#define COLL(blocking_call, nb_call)                                                               \
  do {                                                                                             \
    if (nonblocking)                                                                               \
      nb_call;                                                                                     \
    else                                                                                           \
      blocking_call;                                                                               \
    calls_world++;                                                                                 \
  } while (0)
  COLL(MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Bcast(&bcast_value, 1, MPI_INT, 0, MPI_COMM_WORLD),
       MPI_Ibcast(&bcast_value, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Gather(&value, 1, MPI_INT, gather_buf, 1, MPI_INT, 0, MPI_COMM_WORLD),
       MPI_Igather(&value, 1, MPI_INT, gather_buf, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Gatherv(&value, 1, MPI_INT, gatherv_buf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD),
       MPI_Igatherv(&value, 1, MPI_INT, gatherv_buf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                    &req[n++]));
  COLL(MPI_Scatter(send, 1, MPI_INT, &scatter_one, 1, MPI_INT, 0, MPI_COMM_WORLD),
       MPI_Iscatter(send, 1, MPI_INT, &scatter_one, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Scatterv(send, counts, displs, MPI_INT, &scatterv_one, 1, MPI_INT, 0, MPI_COMM_WORLD),
       MPI_Iscatterv(send, counts, displs, MPI_INT, &scatterv_one, 1, MPI_INT, 0, MPI_COMM_WORLD,
                     &req[n++]));
  COLL(MPI_Allgather(&value, 1, MPI_INT, allgather_buf, 1, MPI_INT, MPI_COMM_WORLD),
       MPI_Iallgather(&value, 1, MPI_INT, allgather_buf, 1, MPI_INT, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Allgatherv(&value, 1, MPI_INT, allgatherv_buf, counts, displs, MPI_INT, MPI_COMM_WORLD),
       MPI_Iallgatherv(&value, 1, MPI_INT, allgatherv_buf, counts, displs, MPI_INT, MPI_COMM_WORLD,
                       &req[n++]));
  COLL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inplace, 1, MPI_INT, MPI_COMM_WORLD),
       MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inplace, 1, MPI_INT, MPI_COMM_WORLD,
                      &req[n++]));
  COLL(MPI_Alltoall(send, 1, MPI_INT, a2a, 1, MPI_INT, MPI_COMM_WORLD),
       MPI_Ialltoall(send, 1, MPI_INT, a2a, 1, MPI_INT, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Alltoallv(send, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT, MPI_COMM_WORLD),
       MPI_Ialltoallv(send, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT, MPI_COMM_WORLD,
                      &req[n++]));
  COLL(MPI_Alltoallw(send, wcounts, wdispls, types, a2aw, wcounts, wdispls, types, MPI_COMM_WORLD),
       MPI_Ialltoallw(send, wcounts, wdispls, types, a2aw, wcounts, wdispls, types, MPI_COMM_WORLD,
                      &req[n++]));
  COLL(MPI_Reduce(&value, &reduce_result, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD),
       MPI_Ireduce(&value, &reduce_result, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Allreduce(&value, &allreduce_result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
       MPI_Iallreduce(&value, &allreduce_result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Allreduce(MPI_IN_PLACE, &allreduce_inplace, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
       MPI_Iallreduce(MPI_IN_PLACE, &allreduce_inplace, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                      &req[n++]));
  COLL(MPI_Reduce_scatter(rs_send, &rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
       MPI_Ireduce_scatter(rs_send, &rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Reduce_scatter_block(rs_send, &rsb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
       MPI_Ireduce_scatter_block(rs_send, &rsb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Scan(&value, &scan_result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
       MPI_Iscan(&value, &scan_result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[n++]));
  COLL(MPI_Exscan(&value, &exscan_result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
       MPI_Iexscan(&value, &exscan_result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[n++]));
#undef COLL
  if (nonblocking) {
    /* Complete the first half with Waitall, the rest one by one with Test loops. */
    int half = n / 2;
    MPI_Waitall(half, req, MPI_STATUSES_IGNORE);
    for (int i = half; i < n; i++) {
      int flag = 0;
      while (!flag)
        MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
    }
  }
  int total = size * (size + 1) / 2;
  expect(bcast_value == 7, "bcast");
  expect(scatter_one == rank && scatterv_one == rank, "scatter");
  expect(allgather_buf[size - 1] == size && allgatherv_buf[0] == 1, "allgather");
  expect(inplace[size - 1] == size - 1, "allgather in place");
  expect(a2a[0] == rank && a2av[size - 1] == (size - 1) * 100 + rank, "alltoall");
  expect(a2aw[0] == rank, "alltoallw");
  expect(allreduce_result == total && allreduce_inplace == size, "allreduce");
  expect(rank != 0 || (reduce_result == total && gather_buf[size - 1] == size), "reduce/gather");
  expect(rs == size * rank + size * (size - 1) / 2 && rsb == rs, "reduce_scatter");
  expect(scan_result == (rank + 1) * (rank + 2) / 2, "scan");
  expect(rank == 0 || exscan_result == rank * (rank + 1) / 2, "exscan");
}

/* Neighbourhood collectives on a periodic ring: both neighbours send their rank. */
static void neighborhood(int nonblocking) {
  MPI_Comm cart;
  int dims[1] = {size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  int crank;
  MPI_Comm_rank(cart, &crank);
  int left = (crank + size - 1) % size, right = (crank + 1) % size;
  int out[2] = {crank, crank}, in[2] = {-1, -1}, counts[2] = {1, 1}, displs[2] = {0, 1};
  MPI_Aint wdispls[2] = {0, sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Request req[5];
  if (nonblocking) {
    int allg[2], allgv[2], a2a[2], a2av[2], a2aw[2];
    MPI_Ineighbor_allgather(&crank, 1, MPI_INT, allg, 1, MPI_INT, cart, &req[0]);
    MPI_Ineighbor_allgatherv(&crank, 1, MPI_INT, allgv, counts, displs, MPI_INT, cart, &req[1]);
    MPI_Ineighbor_alltoall(out, 1, MPI_INT, a2a, 1, MPI_INT, cart, &req[2]);
    MPI_Ineighbor_alltoallv(out, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT, cart,
                            &req[3]);
    MPI_Ineighbor_alltoallw(out, counts, wdispls, types, a2aw, counts, wdispls, types, cart,
                            &req[4]);
    MPI_Waitall(5, req, MPI_STATUSES_IGNORE);
    expect(allg[0] == left && allg[1] == right && a2aw[1] == right, "ineighbor");
  } else {
    MPI_Neighbor_allgather(&crank, 1, MPI_INT, in, 1, MPI_INT, cart);
    expect(in[0] == left && in[1] == right, "neighbor_allgather");
    MPI_Neighbor_allgatherv(&crank, 1, MPI_INT, in, counts, displs, MPI_INT, cart);
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, cart);
    MPI_Neighbor_alltoallv(out, counts, displs, MPI_INT, in, counts, displs, MPI_INT, cart);
    MPI_Neighbor_alltoallw(out, counts, wdispls, types, in, counts, wdispls, types, cart);
    expect(in[0] == left && in[1] == right, "neighbor_alltoallw");
  }
  calls_cart += 5;
  MPI_Comm_free(&cart);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 16) {
    if (rank == 0) fprintf(stderr, "collectives: at most 16 ranks\n");
    MPI_Finalize();
    return 2;
  }
  world_collectives(0);
  world_collectives(1);
  neighborhood(0);
  neighborhood(1);
  if (rank == 0)
    printf("collectives: ranks=%d world_calls=%d cart_calls=%d OK\n", size, calls_world,
           calls_cart);
  MPI_Finalize();
  return 0;
}
