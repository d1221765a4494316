/* A time-stepped program whose trace grows at a steady rate, for htrace-score's tests and
 * bench/score: every PERIOD_US microseconds each rank exchanges a halo with its ring neighbours
 * (MPI_Irecv, MPI_Isend, MPI_Waitall), the even ranks at once and the odd ranks half a period
 * later, so that the even ranks poll for the late halo with MPI_Test (runs of unsuccessful polls);
 * an MPI_Allreduce every 10 steps. Between the calls a rank sleeps until the step's deadline
 * instead of computing, so the steps per second do not depend on the machine's load (as long as a
 * step's calls take less than a period) and the program is light on a shared machine.
 *
 * usage: score_steady SECONDS [PERIOD_US]   (default period 2000 us; prints the steps it made) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { TAG_FROM_LEFT = 1, TAG_FROM_RIGHT = 2 };

static struct timespec at(double t) {
  struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
  return ts;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_until(double t) {
  const struct timespec ts = at(t);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2 || atof(argv[1]) <= 0) {
    if (rank == 0) fprintf(stderr, "usage: score_steady SECONDS [PERIOD_US]\n");
    MPI_Finalize();
    return 2;
  }
  const double period = (argc > 2 ? atof(argv[2]) : 2000.0) * 1e-6;
  const long steps = (long)(atof(argv[1]) / period + 0.5);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double halo_out[2] = {rank, rank}, halo_in[2] = {0, 0}, sum = 0;
  long polls = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = now();
  for (long step = 0; step < steps; ++step) {
    const double deadline = start + (double)step * period;
    MPI_Request requests[4];
    MPI_Irecv(&halo_in[0], 1, MPI_DOUBLE, left, TAG_FROM_LEFT, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&halo_in[1], 1, MPI_DOUBLE, right, TAG_FROM_RIGHT, MPI_COMM_WORLD, &requests[1]);
    if (rank % 2 == 1) sleep_until(deadline + period / 2);
    MPI_Isend(&halo_out[0], 1, MPI_DOUBLE, right, TAG_FROM_LEFT, MPI_COMM_WORLD, &requests[2]);
    MPI_Isend(&halo_out[1], 1, MPI_DOUBLE, left, TAG_FROM_RIGHT, MPI_COMM_WORLD, &requests[3]);
    int done = 0;
    for (;;) {
      MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE);
      if (done) break;
      ++polls;
      sleep_until(now() + 100e-6);
    }
    MPI_Waitall(3, &requests[1], MPI_STATUSES_IGNORE);
    halo_out[0] = halo_out[1] = halo_in[0] + halo_in[1];
    if (step % 10 == 9) {
      double local = halo_in[0], global = 0;
      MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      sum += global;
      halo_out[0] = halo_out[1] = (double)rank;
    }
    sleep_until(deadline + period);
  }
  if (rank == 0)
    printf(
        "score_steady: %d ranks, %ld steps of %.0f us, %ld unsuccessful polls on rank 0, sum %g\n",
        size, steps, period * 1e6, polls, sum);
  MPI_Finalize();
  return 0;
}
