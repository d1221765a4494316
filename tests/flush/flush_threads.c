/* flush_threads: THREADS threads per rank (MPI_THREAD_MULTIPLE), each with its own duplicate of
 * MPI_COMM_WORLD, send ITERS 8-byte messages to themselves: MPI_Isend to the own rank, MPI_Recv,
 * MPI_Wait. The payload and the tag carry the iteration number, so a reader can check the order
 * of the recorded events. (Messages to the own rank keep threads from waiting for each other's
 * progress: on 2 cores, busy-polling threads of two ranks make a test take minutes.) Prints what
 * it did:
 *   THREAD rank=R thread=K sends=N recvs=N
 * usage: mpirun -np 2 flush_threads THREADS ITERS */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, iters;

typedef struct {
  int index;
  MPI_Comm comm;
  long sends, recvs;
} Worker;

static void* run(void* arg) {
  Worker* w = arg;
  for (int i = 0; i < iters; i++) {
    long out = i, in = -1;
    const int tag = i % 30000;
    MPI_Request request;
    MPI_Isend(&out, 1, MPI_LONG, rank, tag, w->comm, &request);
    MPI_Recv(&in, 1, MPI_LONG, rank, tag, w->comm, MPI_STATUS_IGNORE);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (in != i) {
      fprintf(stderr, "flush_threads: thread %d got %ld, expected %d\n", w->index, in, i);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    w->sends++;
    w->recvs++;
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int threads = argc > 1 ? atoi(argv[1]) : 4;
  iters = argc > 2 ? atoi(argv[2]) : 10000;
  if (provided < MPI_THREAD_MULTIPLE || size < 1 || threads < 1 || threads > 64 || iters < 1) {
    if (rank == 0)
      fprintf(stderr,
              "usage: mpirun -np N flush_threads THREADS ITERS (needs MPI_THREAD_MULTIPLE)\n");
    MPI_Finalize();
    return 2;
  }
  Worker workers[64];
  pthread_t ids[64];
  for (int k = 0; k < threads; k++) {
    workers[k].index = k;
    workers[k].sends = workers[k].recvs = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &workers[k].comm);
  }
  for (int k = 0; k < threads; k++)
    pthread_create(&ids[k], NULL, run, &workers[k]);
  for (int k = 0; k < threads; k++)
    pthread_join(ids[k], NULL);
  for (int k = 0; k < threads; k++) {
    printf("THREAD rank=%d thread=%d sends=%ld recvs=%ld\n", rank, k, workers[k].sends,
           workers[k].recvs);
    MPI_Comm_free(&workers[k].comm);
  }
  MPI_Finalize();
  return 0;
}
