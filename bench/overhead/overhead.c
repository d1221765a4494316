/* overhead: what a 0-byte ping-pong and an 8-byte allreduce between 2 ranks pay per MPI call.
 * Run it without and with libhtrace preloaded (run.sh alternates both, and an older libhtrace);
 * the differences are the tracer's cost. Two phases per loop, each REPS repetitions of ITERS
 * iterations, every repetition counted:
 *  - whole: the loop timed as a block; time per call over all repetitions together, so buffer
 *    conversions and file writes are included exactly as often as they happen;
 *  - single: every iteration timed on its own: the median is the hot path (what a call costs when
 *    no buffer is written), the maximum is the longest stall (the slowest iteration on either
 *    rank; a stalled rank also stalls its partner).
 * The whole phase also reports the calling thread's CPU time per call (cpu): what the tracer's
 * work costs when a loaded machine makes wall times useless (run it with 1 rank: the ping-pong is
 * then a send to self and a receive, the allreduce one over a single rank).
 * Prints one line of key=value pairs (ns per call; max_us in microseconds per iteration):
 *   pp_whole= pp_cpu= pp_median= pp_max_us= ar_whole= ar_cpu= ar_median= ar_max_us= calls=
 * A ping-pong iteration is 2 calls on each rank (send + recv), an allreduce iteration 1.
 *
 * usage: overhead [ITERS] [REPS]     (defaults 20000 and 11; 1 or 2 ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}
static double now_ns(void) {
  return clock_ns(CLOCK_MONOTONIC);
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, long n) {
  qsort(values, (size_t)n, sizeof(double), compare);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static void pingpong_once(int rank, int peer) {
  if (rank == 0) {
    MPI_Send(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
  }
}

static void allreduce_once(void) {
  static long in = 1, out;
  MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
}

typedef struct {
  double whole;  /* ns per call, all repetitions */
  double cpu;    /* CPU ns of this thread per call, all repetitions */
  double median; /* ns per call, median single iteration */
  double max_us; /* slowest single iteration on either rank */
} Figures;

/* One loop: `calls` MPI calls per iteration on each rank. */
static Figures measure(int loop, int rank, int peer, long iters, int reps, double* single) {
  Figures f;
  const int calls = loop == 0 ? 2 : 1;
  double total = 0;
  const double cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  for (int rep = 0; rep < reps; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = now_ns();
    if (loop == 0)
      for (long i = 0; i < iters; i++)
        pingpong_once(rank, peer);
    else
      for (long i = 0; i < iters; i++)
        allreduce_once();
    total += now_ns() - start;
  }
  f.whole = total / ((double)calls * (double)iters * reps);
  f.cpu = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start) / ((double)calls * (double)iters * reps);
  long n = 0;
  for (int rep = 0; rep < reps; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double before = now_ns();
    for (long i = 0; i < iters; i++) {
      if (loop == 0)
        pingpong_once(rank, peer);
      else
        allreduce_once();
      const double after = now_ns();
      single[n++] = after - before;
      before = after;
    }
  }
  double local_max = 0;
  for (long i = 0; i < n; i++)
    if (single[i] > local_max) local_max = single[i];
  MPI_Allreduce(&local_max, &f.max_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  f.max_us *= 1e-3;
  f.median = median(single, n) / calls;
  return f;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  int reps = argc > 2 ? atoi(argv[2]) : 11;
  if (size > 2 || iters < 1 || reps < 1 || iters * reps > 100000000L) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 overhead [ITERS] [REPS] (or -np 1)\n");
    MPI_Finalize();
    return 2;
  }
  double* single = malloc(sizeof(double) * (size_t)(iters * reps));
  if (!single) {
    fprintf(stderr, "overhead: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int peer = size == 1 ? 0 : 1 - rank;
  for (long i = 0; i < 1000; i++) /* warm-up: connections, caches */
    pingpong_once(rank, peer), allreduce_once();
  Figures pp = measure(0, rank, peer, iters, reps, single);
  Figures ar = measure(1, rank, peer, iters, reps, single);
  if (rank == 0)
    printf("pp_whole=%.1f pp_cpu=%.1f pp_median=%.1f pp_max_us=%.1f ar_whole=%.1f ar_cpu=%.1f "
           "ar_median=%.1f ar_max_us=%.1f calls=%ld\n",
           pp.whole, pp.cpu, pp.median, pp.max_us, ar.whole, ar.cpu, ar.median, ar.max_us,
           (long)reps * iters * 2 * 3 + 3000);
  free(single);
  MPI_Finalize();
  return 0;
}
