/* fidelity_probe: ground truth for a drifting clock. Every iteration reads the tracer's base clock
 * (CLOCK_MONOTONIC_RAW, or CLOCK_MONOTONIC under HTRACE_CLOCK=monotonic: the two differ in rate by
 * a few ppm where the kernel adjusts the system time) right before MPI_Barrier; under
 * tests/clock/clock_rate_shim.c that reading is the node's fast or slow clock, reading = t (1 +
 * rate) with t the node's namespace clock, so the true time of the barrier's Enter event is reading
 * / (1 + rate) - node offset (plus the constant cost of entering the wrapper, which a common shift
 * absorbs). Between barriers each rank exchanges one message with its partner on the other half of
 * the ranks (another emulated node), so the trace has p2p relations that drift would violate.
 *
 * usage: fidelity_probe OUTDIR SECONDS [PERIOD_US]
 *   writes OUTDIR/probe.RANK: one line "RANK READING_NS" per barrier, in order. Rank 0 decides,
 *   after each barrier, whether SECONDS have passed and broadcasts it. PERIOD_US (default 1000)
 *   is the sleep between iterations: it keeps the oversubscribed ranks from spinning all the time.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static clockid_t base_clock = CLOCK_MONOTONIC_RAW;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(base_clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* One message each way with the partner rank; a rank without partner (odd size) skips it. */
static void exchange(int rank, int size, int iteration) {
  const int half = size / 2;
  if (rank >= 2 * half) return;
  const int partner = rank < half ? rank + half : rank - half;
  int value = iteration;
  if ((rank < half) == (iteration % 2 == 0)) {
    MPI_Send(&value, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
    MPI_Recv(&value, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&value, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&value, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* clock_name = getenv("HTRACE_CLOCK");
  if (clock_name && strcmp(clock_name, "monotonic") == 0) base_clock = CLOCK_MONOTONIC;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: fidelity_probe OUTDIR SECONDS [PERIOD_US]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const double seconds = atof(argv[2]);
  const long period_us = argc > 3 ? atol(argv[3]) : 1000;
  size_t capacity = 1024, count = 0;
  int64_t* readings = malloc(capacity * sizeof *readings);
  const int64_t start = now_ns();
  for (int go = 1, iteration = 0; go; ++iteration) {
    sleep_us(period_us);
    /* The probe: as close to the barrier's Enter as possible. It is stored after the barrier:
     * storing it first would put a page fault (about 10 us in a VM) between the two every 512
     * readings. */
    const int64_t reading = now_ns();
    MPI_Barrier(MPI_COMM_WORLD);
    if (count == capacity) readings = realloc(readings, (capacity *= 2) * sizeof *readings);
    readings[count++] = reading;
    exchange(rank, size, iteration);
    if (rank == 0) go = now_ns() - start < (int64_t)(seconds * 1e9);
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/probe.%d", argv[1], rank);
  FILE* out = fopen(path, "w");
  if (!out) {
    fprintf(stderr, "fidelity_probe: cannot write %s\n", path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t i = 0; i < count; ++i)
    fprintf(out, "%d %lld\n", rank, (long long)readings[i]);
  fclose(out);
  if (rank == 0) printf("fidelity_probe: %zu barriers\n", count);
  free(readings);
  MPI_Finalize();
  return 0;
}
