/* The cost of one unsuccessful MPI_Test: one rank tests a receive nobody sends, CALLS times per
 * repetition, REPS repetitions, and prints the median ns per call over whole repetitions (every
 * buffer conversion and file write included), then cancels the receive.
 *
 * usage: poll-cost CALLS REPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long calls = argc > 1 ? atol(argv[1]) : 1000000;
  const int reps = argc > 2 ? atoi(argv[2]) : 11;
  int value = 0, flag = 0;
  MPI_Request request;
  MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_SELF, &request);
  double* per_call = malloc(sizeof(double) * (size_t)reps);
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_ns();
    for (long i = 0; i < calls; ++i)
      MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    per_call[r] = (now_ns() - t0) / (double)calls;
  }
  qsort(per_call, (size_t)reps, sizeof(double), by_value);
  printf(
      "unsuccessful MPI_Test: median %.1f ns per call (min %.1f, max %.1f) over %d x %ld calls\n",
      per_call[reps / 2], per_call[0], per_call[reps - 1], reps, calls);
  MPI_Cancel(&request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  free(per_call);
  MPI_Finalize();
  return 0;
}
