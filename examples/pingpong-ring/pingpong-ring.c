/* pingpong-ring: the demo program. Each rank exchanges small messages with its ring neighbours
 * through every MPI point-to-point flavour (blocking, synchronous, buffered, ready, non-blocking,
 * persistent, wildcard receives, probe/mprobe, sendrecv, all wait/test variants, request_free,
 * cancel) plus a few collectives, then prints one line.
 *
 * Message counts are deterministic: the program counts every message it sends and prints the total,
 * so tests can compare it with the number of send records in the trace.
 * Wildcard receives use tag 100 + sender rank, so a trace reader can check the recorded source.
 *
 * usage: pingpong-ring [ITERATIONS]   (default 1; every iteration repeats the whole exchange) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, left, right;
static long sent;     /* messages sent by this rank */
static long checksum; /* sum of every payload received: checked against the expected value */

static void expect(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "pingpong-ring: rank %d: check failed: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

/* Blocking standard and synchronous sends around the ring, passing a token. */
static void token_rings(void) {
  int token = 0;
  if (rank == 0) {
    token = 1;
    MPI_Send(&token, 1, MPI_INT, right, 10, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 1, MPI_INT, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    token++;
    MPI_Send(&token, 1, MPI_INT, right, 10, MPI_COMM_WORLD);
  }
  sent++;
  if (rank == 0) {
    checksum += token;
    expect(token == size, "standard token ring");
    MPI_Ssend(&token, 1, MPI_INT, right, 11, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 1, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ssend(&token, 1, MPI_INT, right, 11, MPI_COMM_WORLD);
  }
  sent++;
}

/* Buffered and ready sends. */
static void buffered_and_ready(void) {
  int value = rank, got = -1;
  int bytes = 0;
  MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &bytes);
  bytes += MPI_BSEND_OVERHEAD;
  char* buffer = malloc((size_t)bytes);
  MPI_Buffer_attach(buffer, bytes);
  MPI_Bsend(&value, 1, MPI_INT, right, 12, MPI_COMM_WORLD);
  sent++;
  MPI_Recv(&got, 1, MPI_INT, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect(got == left, "buffered send payload");
  void* detached;
  MPI_Buffer_detach(&detached, &bytes);
  free(buffer);

  MPI_Request request;
  MPI_Irecv(&got, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &request);
  MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted before any ready send */
  MPI_Rsend(&value, 1, MPI_INT, right, 13, MPI_COMM_WORLD);
  sent++;
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  expect(got == left, "ready send payload");
}

/* Non-blocking halo exchange with both neighbours. */
static void halo(void) {
  int out[2] = {rank, rank}, in[2] = {-1, -1};
  MPI_Request requests[4];
  MPI_Status statuses[4];
  MPI_Irecv(&in[0], 1, MPI_INT, left, 14, MPI_COMM_WORLD, &requests[0]);
  MPI_Irecv(&in[1], 1, MPI_INT, right, 14, MPI_COMM_WORLD, &requests[1]);
  MPI_Isend(&out[0], 1, MPI_INT, left, 14, MPI_COMM_WORLD, &requests[2]);
  MPI_Isend(&out[1], 1, MPI_INT, right, 14, MPI_COMM_WORLD, &requests[3]);
  sent += 2;
  MPI_Waitall(4, requests, statuses);
  expect(in[0] == left && in[1] == right, "halo payload");
}

/* Persistent requests, started three times, then freed. */
static void persistent(void) {
  int value = rank, got = -1;
  MPI_Request requests[2];
  MPI_Recv_init(&got, 1, MPI_INT, left, 15, MPI_COMM_WORLD, &requests[0]);
  MPI_Send_init(&value, 1, MPI_INT, right, 15, MPI_COMM_WORLD, &requests[1]);
  for (int i = 0; i < 3; i++) {
    if (i == 0) {
      MPI_Start(&requests[0]);
      MPI_Start(&requests[1]);
    } else {
      MPI_Startall(2, requests);
    }
    sent++;
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    expect(got == left, "persistent payload");
  }
  MPI_Request_free(&requests[0]);
  MPI_Request_free(&requests[1]);
}

/* Wildcard receives on rank 0 with MPI_STATUS_IGNORE: the trace must still show the real source.
 * Every other rank sends tag 100 + rank and payload rank. */
static void wildcards(void) {
  if (rank == 0) {
    for (int i = 1; i < size; i++) {
      int got = -1;
      MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      checksum += got;
    }
    /* Second round through MPI_Irecv + MPI_Waitany, statuses ignored as well. */
    int got[4] = {-1, -1, -1, -1};
    MPI_Request requests[4];
    for (int i = 1; i < size; i++)
      MPI_Irecv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &requests[i - 1]);
    for (int i = 1; i < size; i++) {
      int index;
      MPI_Waitany(size - 1, requests, &index, MPI_STATUS_IGNORE);
    }
    for (int i = 1; i < size; i++)
      checksum += got[i];
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);
    MPI_Send(&rank, 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);
    sent += 2;
  }
  MPI_Barrier(MPI_COMM_WORLD); /* keeps later tags out of the wildcard receives */
}

/* Probe, matched probe and their non-blocking forms: rank 0 receives variable-size messages. */
static void probes(void) {
  if (rank == 0) {
    for (int i = 1; i < size; i++) {
      MPI_Status status;
      int count;
      MPI_Probe(MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, MPI_INT, &count);
      int* data = malloc(sizeof(int) * (size_t)count);
      MPI_Recv(data, count, MPI_INT, status.MPI_SOURCE, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expect(count == status.MPI_SOURCE, "probe count");
      free(data);
    }
    for (int i = 1; i < size; i++) {
      MPI_Message message;
      MPI_Status status;
      int count;
      MPI_Mprobe(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &message, &status);
      MPI_Get_count(&status, MPI_INT, &count);
      int* data = malloc(sizeof(int) * (size_t)count);
      MPI_Mrecv(data, count, MPI_INT, &message, MPI_STATUS_IGNORE);
      free(data);
    }
    for (int i = 1; i < size; i++) {
      MPI_Message message;
      MPI_Status status;
      int flag = 0, count, found = 0;
      while (!flag)
        MPI_Improbe(MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &flag, &message, &status);
      MPI_Iprobe(MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
      MPI_Get_count(&status, MPI_INT, &count);
      int* data = malloc(sizeof(int) * (size_t)count + 1);
      MPI_Request request;
      MPI_Imrecv(data, count, MPI_INT, &message, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      free(data);
    }
  } else {
    int data[4] = {rank, rank, rank, rank};
    MPI_Send(data, rank, MPI_INT, 0, 20, MPI_COMM_WORLD);
    MPI_Send(data, rank, MPI_INT, 0, 21, MPI_COMM_WORLD);
    MPI_Send(data, rank, MPI_INT, 0, 22, MPI_COMM_WORLD);
    sent += 3;
  }
}

static void sendrecvs(void) {
  int value = rank, got = -1;
  MPI_Sendrecv(&value, 1, MPI_INT, right, 30, &got, 1, MPI_INT, left, 30, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  expect(got == left, "sendrecv payload");
  value = rank;
  MPI_Sendrecv_replace(&value, 1, MPI_INT, right, 31, left, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect(value == left, "sendrecv_replace payload");
  sent += 2;
}

/* One round of two receives from the left and two sends to the right, completed by `kind`. */
static void completion_round(int tag, const char* kind) {
  int out[2] = {rank, rank + 1}, in[2] = {-1, -1};
  MPI_Request requests[4];
  MPI_Irecv(&in[0], 1, MPI_INT, left, tag, MPI_COMM_WORLD, &requests[0]);
  MPI_Irecv(&in[1], 1, MPI_INT, left, tag, MPI_COMM_WORLD, &requests[1]);
  MPI_Isend(&out[0], 1, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[2]);
  MPI_Isend(&out[1], 1, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[3]);
  sent += 2;
  int done = 0;
  while (done < 4) {
    int index, flag, count, indices[4];
    switch (kind[0]) {
    case 'w': /* waitany */
      MPI_Waitany(4, requests, &index, MPI_STATUS_IGNORE);
      done++;
      break;
    case 'W': /* waitsome */
      MPI_Waitsome(4, requests, &count, indices, MPI_STATUSES_IGNORE);
      done += count;
      break;
    case 't': /* testany */
      MPI_Testany(4, requests, &index, &flag, MPI_STATUS_IGNORE);
      done += flag && index != MPI_UNDEFINED;
      break;
    case 'T': /* testsome */
      MPI_Testsome(4, requests, &count, indices, MPI_STATUSES_IGNORE);
      done += count;
      break;
    default: /* testall */
      MPI_Testall(4, requests, &flag, MPI_STATUSES_IGNORE);
      done = flag ? 4 : 0;
      break;
    }
  }
  expect(in[0] == left && in[1] == left + 1, kind);
}

/* A send whose request is freed before completion, and a receive that is cancelled. */
static void free_and_cancel(void) {
  int value = rank, got = -1;
  MPI_Request request;
  MPI_Isend(&value, 1, MPI_INT, right, 50, MPI_COMM_WORLD, &request);
  sent++;
  MPI_Request_free(&request);
  MPI_Recv(&got, 1, MPI_INT, left, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect(got == left, "freed send payload");

  MPI_Status status;
  int cancelled = 0;
  MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &request); /* never sent */
  MPI_Cancel(&request);
  MPI_Wait(&request, &status);
  MPI_Test_cancelled(&status, &cancelled);
  expect(cancelled, "receive cancelled");
}

static void collectives(void) {
  int value = rank, sum = 0, root_value = rank == 0 ? 42 : 0;
  int* all = malloc(sizeof(int) * (size_t)size);
  int* mine = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size; i++)
    mine[i] = rank * size + i;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  expect(root_value == 42, "bcast");
  MPI_Reduce(&value, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect(sum == size * (size - 1) / 2, "allreduce");
  MPI_Gather(&value, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgather(&value, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoall(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  expect(all[0] == rank, "alltoall");
  free(all);
  free(mine);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size > 4) {
    if (rank == 0) fprintf(stderr, "pingpong-ring: needs 2 to 4 ranks\n");
    MPI_Finalize();
    return 2;
  }
  int iterations = argc > 1 ? atoi(argv[1]) : 1;
  left = (rank + size - 1) % size;
  right = (rank + 1) % size;

  for (int it = 0; it < iterations; it++) {
    token_rings();
    buffered_and_ready();
    halo();
    persistent();
    wildcards();
    probes();
    sendrecvs();
    completion_round(40, "waitany");
    completion_round(41, "Waitsome");
    completion_round(42, "testany");
    completion_round(43, "Testsome");
    completion_round(44, "all");
    free_and_cancel();
    collectives();
  }

  long totals[2] = {0, 0}, local[2] = {sent, checksum};
  MPI_Reduce(local, totals, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    /* token ring: size; wildcards: 2 * (1+..+size-1) */
    long expected = (long)iterations * ((long)size + (long)size * (size - 1));
    printf("pingpong-ring: ranks=%d iterations=%d messages=%ld checksum=%ld %s\n", size, iterations,
           totals[0], totals[1], totals[1] == expected ? "OK" : "WRONG");
  }
  MPI_Finalize();
  return 0;
}
