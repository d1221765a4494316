/* Polling loops for the poll-run test (poll_runs_test.py): rank 0 sends MESSAGES messages, one
 * every GAP_MS milliseconds; rank 1 polls for each one with MPI_Test, MPI_Testany, MPI_Testsome,
 * MPI_Testall, MPI_Iprobe or MPI_Improbe (MODE: test, iprobe, or all: each in turn) and writes how
 * many polls found nothing, per function, to COUNT_FILE (one "NAME COUNT" line each).
 *
 * usage: poll_runs MODE MESSAGES GAP_MS COUNT_FILE */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG = 7, KINDS = 6 };
static const char* const kNames[KINDS] = {"MPI_Test",    "MPI_Testany", "MPI_Testsome",
                                          "MPI_Testall", "MPI_Iprobe",  "MPI_Improbe"};

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Polls for one message from rank 0 with function `kind`; returns the polls that found nothing. */
static long poll_one(int kind, int* value) {
  long missed = 0;
  int flag = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Status status;
  if (kind <= 3) MPI_Irecv(value, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD, &request);
  while (!flag) {
    switch (kind) {
    case 0:
      MPI_Test(&request, &flag, &status);
      break;
    case 1: {
      int index = 0;
      MPI_Testany(1, &request, &index, &flag, &status);
      break;
    }
    case 2: {
      int outcount = 0, index = 0;
      MPI_Testsome(1, &request, &outcount, &index, &status);
      flag = outcount > 0;
      break;
    }
    case 3:
      MPI_Testall(1, &request, &flag, &status);
      break;
    case 4:
      MPI_Iprobe(0, TAG, MPI_COMM_WORLD, &flag, &status);
      if (flag) MPI_Recv(value, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      break;
    default: {
      MPI_Message message;
      MPI_Improbe(0, TAG, MPI_COMM_WORLD, &flag, &message, &status);
      if (flag) MPI_Mrecv(value, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
      break;
    }
    }
    if (!flag) ++missed;
  }
  return missed;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 5) {
    fprintf(stderr, "usage: poll_runs test|iprobe|all MESSAGES GAP_MS COUNT_FILE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* mode = argv[1];
  const int messages = atoi(argv[2]), gap_ms = atoi(argv[3]);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  long missed[KINDS] = {0};
  for (int i = 0; i < messages; ++i) {
    int value = i;
    if (rank == 0) {
      sleep_ms(gap_ms);
      MPI_Send(&value, 1, MPI_INT, 1, TAG, MPI_COMM_WORLD);
    } else if (rank == 1) {
      const int kind = strcmp(mode, "test") == 0 ? 0 : strcmp(mode, "iprobe") == 0 ? 4 : i % KINDS;
      missed[kind] += poll_one(kind, &value);
      if (value != i) {
        fprintf(stderr, "message %d carried %d\n", i, value);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    FILE* f = fopen(argv[4], "w");
    if (!f) {
      perror(argv[4]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int k = 0; k < KINDS; ++k)
      fprintf(f, "%s %ld\n", kNames[k], missed[k]);
    fclose(f);
  }
  MPI_Finalize();
  return 0;
}
