/* budget: a deterministic MPI program for the HTRACE_BUDGET tests (budget_test.py). Every
 * location makes the same calls in the same order on every run, so what a trace recorded can be
 * compared with what the program did, call by call. Each rank prints how often it called each
 * MPI function (MPI_Init* and MPI_Finalize aside), rank 0 also a checksum of its results.
 *
 * usage: budget loop ITERATIONS HEAVY THREAD PAUSE
 *   MPI_Init (MPI_Init_thread with MPI_THREAD_MULTIPLE if THREAD), MPI_Comm_rank, MPI_Comm_size,
 *   with THREAD MPI_Comm_dup; then per iteration i: [MPI_Pcontrol(0) if PAUSE and i % 8 == 4],
 *   MPI_Sendrecv around the ring, MPI_Allreduce, HEAVY times MPI_Comm_rank on rank 0 only (so its
 *   trace grows fastest), [MPI_Pcontrol(1)]. With THREAD a second thread makes ITERATIONS ring
 *   MPI_Sendrecv on the duplicate, then the main thread frees it after joining.
 * usage: budget pcontrol
 *   MPI_Init, 9 x MPI_Comm_rank, MPI_Pcontrol(0), MPI_Barrier, MPI_Pcontrol(1), then 10 x
 *   (MPI_Comm_rank, MPI_Barrier). Run with HTRACE_BUFFER_SIZE=1k (21 records) and HTRACE_BUDGET=1,
 *   the buffer fills at MPI_Pcontrol(0)'s MeasurementOnOff record (the 22nd: MPI_Init's Enter and
 *   Leave, 18 of MPI_Comm_rank, MPI_Pcontrol's Enter): the budget is reached while recording is
 *   paused, and MPI_Pcontrol(1) must not switch it back on. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SENDRECV, ALLREDUCE, COMM_RANK, COMM_SIZE, COMM_DUP, COMM_FREE, PCONTROL, BARRIER, KINDS };
static const char* const names[KINDS] = {"MPI_Sendrecv",  "MPI_Allreduce", "MPI_Comm_rank",
                                         "MPI_Comm_size", "MPI_Comm_dup",  "MPI_Comm_free",
                                         "MPI_Pcontrol",  "MPI_Barrier"};
/* Calls per function: the main thread's and the second thread's. */
static long calls[2][KINDS];
#define CALL(thread, kind, call) (calls[thread][kind]++, (call))

static int rank, size, iterations;
static MPI_Comm dup_comm = MPI_COMM_NULL;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "budget: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

static void* second_thread(void* unused) {
  (void)unused;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < iterations; i++) {
    int out = rank * 100000 + i, in = -1;
    CALL(1, SENDRECV,
         MPI_Sendrecv(&out, 1, MPI_INT, right, 1, &in, 1, MPI_INT, left, 1, dup_comm,
                      MPI_STATUS_IGNORE));
    check(in == left * 100000 + i, "second thread: wrong payload");
  }
  return NULL;
}

static void print_calls(void) {
  for (int k = 0; k < KINDS; k++)
    if (calls[0][k] + calls[1][k] != 0)
      printf("rank %d calls %s %ld\n", rank, names[k], calls[0][k] + calls[1][k]);
}

static int loop(int argc, char** argv) {
  if (argc != 6) return 2;
  iterations = atoi(argv[2]);
  const int heavy = atoi(argv[3]), thread = atoi(argv[4]), pause = atoi(argv[5]);
  if (thread) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
  } else {
    MPI_Init(&argc, &argv);
  }
  CALL(0, COMM_RANK, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CALL(0, COMM_SIZE, MPI_Comm_size(MPI_COMM_WORLD, &size));
  pthread_t second;
  if (thread) {
    CALL(0, COMM_DUP, MPI_Comm_dup(MPI_COMM_WORLD, &dup_comm));
    check(pthread_create(&second, NULL, second_thread, NULL) == 0, "pthread_create");
  }
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long long checksum = 0;
  for (int i = 0; i < iterations; i++) {
    const int paused = pause && i % 8 == 4;
    if (paused) CALL(0, PCONTROL, MPI_Pcontrol(0));
    int out = rank * 1000 + i, in = -1;
    CALL(0, SENDRECV,
         MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    check(in == left * 1000 + i, "wrong payload");
    long long mine = (long long)(rank + 1) * (i + 1), sum = 0;
    CALL(0, ALLREDUCE, MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    checksum += sum;
    int me = -1;
    for (int h = 0; rank == 0 && h < heavy; h++)
      CALL(0, COMM_RANK, MPI_Comm_rank(MPI_COMM_WORLD, &me));
    if (paused) CALL(0, PCONTROL, MPI_Pcontrol(1));
  }
  if (thread) {
    pthread_join(second, NULL);
    CALL(0, COMM_FREE, MPI_Comm_free(&dup_comm));
  }
  if (rank == 0)
    printf("budget: ranks=%d iterations=%d heavy=%d thread=%d pause=%d checksum=%lld\n", size,
           iterations, heavy, thread, pause, checksum);
  print_calls();
  MPI_Finalize();
  return 0;
}

static int pcontrol(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (int k = 0; k < 9; k++)
    CALL(0, COMM_RANK, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CALL(0, PCONTROL, MPI_Pcontrol(0));
  CALL(0, BARRIER, MPI_Barrier(MPI_COMM_WORLD));
  CALL(0, PCONTROL, MPI_Pcontrol(1));
  for (int k = 0; k < 10; k++) {
    CALL(0, COMM_RANK, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CALL(0, BARRIER, MPI_Barrier(MPI_COMM_WORLD));
  }
  print_calls();
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "loop") == 0) return loop(argc, argv);
  if (argc == 2 && strcmp(argv[1], "pcontrol") == 0) return pcontrol(argc, argv);
  fprintf(stderr, "usage: budget loop ITERATIONS HEAVY THREAD PAUSE | budget pcontrol\n");
  return 2;
}
