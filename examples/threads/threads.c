/* threads: MPI_THREAD_MULTIPLE with pthreads. Every rank starts THREADS threads; thread t of rank r
 * exchanges ROUNDS messages with thread t of both ring neighbours on a duplicated communicator,
 * using tag t so that the threads' messages never cross. The main thread also communicates.
 * Prints the number of messages sent in total.
 *
 * usage: threads [THREADS] [ROUNDS]     (defaults 3 and 20) */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, rounds;
static MPI_Comm comm;

static void fail(const char* what) {
  fprintf(stderr, "threads: rank %d: check failed: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

static void* worker(void* arg) {
  int tag = (int)(long)arg;
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int i = 0; i < rounds; i++) {
    int out = rank * 1000 + i, in = -1, back = -1;
    MPI_Request request;
    MPI_Irecv(&in, 1, MPI_INT, left, tag, comm, &request);
    MPI_Send(&out, 1, MPI_INT, right, tag, comm);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (in != left * 1000 + i) fail("payload");
    /* and back the other way, blocking on both sides */
    MPI_Sendrecv(&out, 1, MPI_INT, left, tag, &back, 1, MPI_INT, right, tag, comm,
                 MPI_STATUS_IGNORE);
    if (back != right * 1000 + i) fail("payload back");
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "threads: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
    MPI_Finalize();
    return 77;
  }
  int nthreads = argc > 1 ? atoi(argv[1]) : 3;
  rounds = argc > 2 ? atoi(argv[2]) : 20;
  if (nthreads < 1 || nthreads > 64) nthreads = 3;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  pthread_t threads[64];
  for (int t = 0; t < nthreads; t++)
    pthread_create(&threads[t], NULL, worker, (void*)(long)(t + 1));
  worker((void*)0L); /* the main thread takes tag 0 */
  for (int t = 0; t < nthreads; t++)
    pthread_join(threads[t], NULL);

  MPI_Barrier(comm);
  MPI_Comm_free(&comm);
  if (rank == 0)
    printf("threads: ranks=%d threads=%d messages=%d OK\n", size, nthreads + 1,
           size * (nthreads + 1) * rounds * 2);
  MPI_Finalize();
  return 0;
}
