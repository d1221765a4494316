/* One-sided communication with every synchronization mode, with results checked by the program:
 *   1. fence epoch on an allocated window: Put to the right neighbour, Get from the left one,
 *      Accumulate (sum) into rank 0;
 *   2. PSCW on a created window (named "pscw window"): rank 0 starts an access epoch on all other
 * ranks and puts into each; the others post an exposure epoch for rank 0 and wait (odd ranks:
 * MPI_Win_wait, even ranks: an MPI_Win_test loop);
 *   3. passive target on the allocated window: rank 0 locks rank 1 exclusively, puts, flushes,
 *      gets, unlocks; then every rank locks all, does Fetch_and_op and Compare_and_swap on rank 0,
 *      a request-based Rput (MPI_Wait) to the right and Rget (MPI_Test loop) from rank 0,
 *      flushes all and unlocks all.
 * Prints "rma ok ranks=N" when every value read back is right, exits 1 otherwise.
 * The tests derive the expected OTF2 records from this description (tests/rma_io). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { kSlots = 16 };

static int failures = 0;
static void expect(int rank, const char* what, int got, int want) {
  if (got != want) {
    fprintf(stderr, "rank %d: %s = %d, expected %d\n", rank, what, got, want);
    ++failures;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "rma needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* 1. Fence. */
  int* slots = NULL;
  MPI_Win allocated;
  MPI_Win_allocate(kSlots * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slots,
                   &allocated);
  for (int i = 0; i < kSlots; ++i)
    slots[i] = 0;
  int mine[4] = {rank, rank + 100, rank + 200, rank + 300}, got[2] = {0, 0}, one = 1;
  MPI_Win_fence(0, allocated);
  MPI_Put(mine, 4, MPI_INT, right, 0, 4, MPI_INT, allocated); /* 16 bytes */
  MPI_Get(got, 2, MPI_INT, left, 8, 2, MPI_INT, allocated);   /* 8 bytes, untouched slots */
  MPI_Accumulate(&one, 1, MPI_INT, 0, 10, 1, MPI_INT, MPI_SUM, allocated); /* 4 bytes */
  MPI_Win_fence(0, allocated);
  expect(rank, "slot 0 after Put", slots[0], left);
  expect(rank, "slot 3 after Put", slots[3], left + 300);
  if (rank == 0) expect(rank, "slot 10 after Accumulate", slots[10], size);

  /* 2. PSCW on a created window. */
  int exposed[8] = {0};
  MPI_Win created;
  MPI_Win_create(exposed, sizeof exposed, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &created);
  MPI_Win_set_name(created, "pscw window");
  MPI_Group world_group, peers;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  if (rank == 0) {
    int zero = 0;
    MPI_Group_excl(world_group, 1, &zero, &peers); /* ranks 1 .. size-1 */
    int block[8];
    for (int i = 0; i < 8; ++i)
      block[i] = 1000 + i;
    MPI_Win_start(peers, 0, created);
    for (int target = 1; target < size; ++target)
      MPI_Put(block, 8, MPI_INT, target, 0, 8, MPI_INT, created); /* 32 bytes each */
    MPI_Win_complete(created);
  } else {
    int zero = 0;
    MPI_Group_incl(world_group, 1, &zero, &peers); /* rank 0 */
    MPI_Win_post(peers, 0, created);
    if (rank % 2 == 0) { /* even ranks poll the exposure epoch's end */
      int flag = 0;
      while (!flag)
        MPI_Win_test(created, &flag);
    } else {
      MPI_Win_wait(created);
    }
    expect(rank, "exposed[7] after PSCW", exposed[7], 1007);
  }
  MPI_Group_free(&peers);
  MPI_Group_free(&world_group);

  /* 3. Passive target. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int three[3] = {7, 8, 9}, back = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, allocated);
    MPI_Put(three, 3, MPI_INT, 1, 12, 3, MPI_INT, allocated); /* 12 bytes */
    MPI_Win_flush(1, allocated);
    MPI_Get(&back, 1, MPI_INT, 1, 13, 1, MPI_INT, allocated); /* 4 bytes */
    MPI_Win_unlock(1, allocated);
    expect(rank, "value read back under the lock", back, 8);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, allocated);
  int fetched = -1, compare = -12345, swapped = -1, value = 1, pair[2] = {rank, rank}, remote = -1;
  MPI_Fetch_and_op(&value, &fetched, MPI_INT, 0, 11, MPI_SUM, allocated);
  MPI_Compare_and_swap(&value, &compare, &swapped, MPI_INT, 0, 11, allocated); /* no swap */
  MPI_Request put_request, get_request;
  MPI_Rput(pair, 2, MPI_INT, right, 4, 2, MPI_INT, allocated, &put_request); /* 8 bytes */
  MPI_Wait(&put_request, MPI_STATUS_IGNORE);
  MPI_Rget(&remote, 1, MPI_INT, 0, 0, 1, MPI_INT, allocated, &get_request); /* 4 bytes */
  int done = 0;
  while (!done)
    MPI_Test(&get_request, &done, MPI_STATUS_IGNORE);
  MPI_Win_flush_all(allocated);
  MPI_Win_unlock_all(allocated);
  MPI_Barrier(MPI_COMM_WORLD);
  expect(rank, "fetched value in range", fetched >= 0 && fetched < size, 1);
  expect(rank, "remote slot 0 of rank 0", remote, size - 1);
  if (rank == 0) expect(rank, "Fetch_and_op sum", slots[11], size);

  MPI_Win_free(&created);
  MPI_Win_free(&allocated);
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) printf("rma ok ranks=%d\n", size);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
