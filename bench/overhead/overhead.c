/* overhead: time per MPI call of a 0-byte ping-pong and of an 8-byte allreduce between 2 ranks.
 * Run it with and without libhtrace preloaded (run.sh does both); the difference is the tracer's
 * cost per call. Prints the median over REPS repetitions of ITERS iterations each, as
 *   pingpong_ns_per_call=X allreduce_ns_per_call=Y calls=N
 * where a ping-pong iteration is 2 calls on each rank (send + recv), an allreduce iteration 1.
 *
 * usage: overhead [ITERS] [REPS]     (defaults 20000 and 11) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int n) {
  qsort(values, (size_t)n, sizeof(double), compare);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  int reps = argc > 2 ? atoi(argv[2]) : 11;
  if (size != 2 || iters < 1 || reps < 1 || reps > 1000) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 overhead [ITERS] [REPS<=1000]\n");
    MPI_Finalize();
    return 2;
  }
  int peer = 1 - rank;
  double pingpong[1000], allreduce[1000];
  for (int rep = -1; rep < reps; rep++) { /* rep -1 warms up */
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now_ns();
    for (int i = 0; i < iters; i++) {
      if (rank == 0) {
        MPI_Send(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
    }
    double pp = (now_ns() - start) / (2.0 * iters);
    MPI_Barrier(MPI_COMM_WORLD);
    long in = rank, out = 0;
    start = now_ns();
    for (int i = 0; i < iters; i++)
      MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double ar = (now_ns() - start) / iters;
    if (rep >= 0) {
      pingpong[rep] = pp;
      allreduce[rep] = ar;
    }
  }
  if (rank == 0)
    printf("pingpong_ns_per_call=%.1f allreduce_ns_per_call=%.1f calls=%ld\n",
           median(pingpong, reps), median(allreduce, reps), (long)(reps + 1) * iters * 3);
  MPI_Finalize();
  return 0;
}
