/* A program that ends badly on purpose, for the salvage tests. Usage:
 *   fail_app MODE N COUNTDIR
 * Every rank counts its MPI_Barrier calls in COUNTDIR/<rank> (a mapped file, so the count survives
 * any death, SIGKILL included): [0] calls entered, [1] calls returned. These are the independent
 * figures the tests compare the salvaged archive with. Modes:
 *   finish     N barriers, then MPI_Finalize; exit status 3 (a run whose trace disk fills up)
 *   abort      rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) after N barriers
 *   segv       rank 1 writes through a null pointer after N barriers
 *   loop       barriers until killed from outside (SIGTERM to mpirun, SIGKILL to every rank)
 *   ring       rounds until killed: 64 barriers on MPI_COMM_SELF, then an MPI_Sendrecv of 8 bytes
 *              to the next rank from the previous one on MPI_COMM_WORLD. Events reach the disk at
 *              the pace of one process, not of a barrier of all (hundreds of ranks on a few
 *              cores), with real traffic between neighbours all along.
 *   kill-one   barriers on MPI_COMM_SELF until killed (the test SIGKILLs rank 1, rank 0 goes on,
 *              one barrier per millisecond; rank 1 pauses 10 us after each)
 *   omp-abort  N barriers, then an OpenMP parallel region in which rank 1's master thread calls
 *              MPI_Abort(MPI_COMM_WORLD, 9) while the other threads wait in the region
 *   rma-io     N rounds of one-sided and MPI-IO calls on a window named "salvage window" and the
 *              file COUNTDIR/io.dat, then rank 1 calls MPI_Abort(MPI_COMM_WORLD, 8). A round:
 *              MPI_Win_fence, MPI_Put of 8 bytes to the next rank, MPI_Win_fence, MPI_File_write_at
 *              of 8 bytes. Counted: [3] puts returned, [4] file writes returned, [5] fences
 *              entered, [6] fences returned. */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static volatile uint64_t* counts;

static void map_counter(const char* dir, int rank) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%d", dir, rank);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, 4096) != 0) {
    perror(path);
    exit(1);
  }
  counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (counts == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  close(fd);
  counts[2] = (uint64_t)getpid();
}

/* Rounds of one-sided and MPI-IO calls, counted, until rank 1 aborts (mode rma-io). */
static void rma_io_rounds(long n, const char* dir, int rank) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static long exposed[64];
  MPI_Win win;
  MPI_Win_create(exposed, sizeof exposed, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_name(win, "salvage window");
  char path[4096];
  snprintf(path, sizeof path, "%s/io.dat", dir);
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  const long value = rank;
  for (long i = 0; i < n; ++i) {
    ++counts[5];
    MPI_Win_fence(0, win);
    ++counts[6];
    MPI_Put(&value, 1, MPI_LONG, (rank + 1) % size, (MPI_Aint)(i % 64), 1, MPI_LONG, win);
    ++counts[3];
    ++counts[5];
    MPI_Win_fence(0, win);
    ++counts[6];
    MPI_File_write_at(fh, (MPI_Offset)((i * size + rank) % 4096) * 8, &value, 1, MPI_LONG,
                      MPI_STATUS_IGNORE);
    ++counts[4];
  }
  if (rank == 1) {
    printf("rank 1: MPI_Abort after %ld one-sided and I/O rounds\n", n);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 8);
  }
  ++counts[5];
  MPI_Win_fence(0, win); /* waits for rank 1, which never comes */
  ++counts[6];
  MPI_File_close(&fh);
  MPI_Win_free(&win);
}

static void barrier(MPI_Comm comm) {
  ++counts[0];
  MPI_Barrier(comm);
  ++counts[1];
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: fail_app MODE N COUNTDIR\n");
    return 2;
  }
  const char* mode = argv[1];
  const long n = atol(argv[2]);
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  map_counter(argv[3], rank);
  if (rank == 0) printf("fail_app %s %ld: started\n", mode, n);
  fflush(stdout);

  if (!strcmp(mode, "loop")) {
    /* FAIL_APP_PACE_US paces the loop, so that what mpirun's SIGTERM leaves stays small enough
       to read back quickly (mpirun may take tens of seconds to end the ranks). */
    const char* pace = getenv("FAIL_APP_PACE_US");
    const useconds_t pause = pace ? (useconds_t)atoi(pace) : 0;
    for (;;) {
      barrier(MPI_COMM_WORLD);
      if (pause) usleep(pause);
    }
  }
  if (!strcmp(mode, "ring")) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long sent = rank, received = 0;
    for (;;) {
      for (int i = 0; i < 64; ++i)
        barrier(MPI_COMM_SELF);
      MPI_Sendrecv(&sent, 1, MPI_LONG, (rank + 1) % size, 0, &received, 1, MPI_LONG,
                   (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++sent;
    }
  }
  if (!strcmp(mode, "rma-io")) {
    rma_io_rounds(n, argv[3], rank);
    MPI_Finalize();
    return 0;
  }
  if (!strcmp(mode, "kill-one")) {
    for (;;) {
      barrier(MPI_COMM_SELF);
      /* Keeps the traces small: rank 0's until mpirun ends it; rank 1's until the test, which waits
         for its first 256 KiB chunk on disk, kills it (unpaced, it wrote 5 M events by then). */
      usleep(rank == 0 ? 1000 : 10);
    }
  }
  for (long i = 0; i < n; ++i)
    barrier(MPI_COMM_WORLD);
  if (!strcmp(mode, "abort") && rank == 1) {
    printf("rank 1: MPI_Abort after %ld barriers\n", n);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 7);
  }
  if (!strcmp(mode, "segv") && rank == 1) {
    printf("rank 1: SIGSEGV after %ld barriers\n", n);
    fflush(stdout);
    *(volatile int*)(uintptr_t)0 = 1;
  }
  if (!strcmp(mode, "omp-abort")) {
#pragma omp parallel num_threads(2)
    {
#ifdef _OPENMP
      if (omp_get_thread_num() == 0 && rank == 1) {
        printf("rank 1: MPI_Abort inside a parallel region\n");
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 9);
      }
#endif
#pragma omp barrier
    }
  }
  /* Others wait here for the failing rank's end (it never comes: the job is torn down). */
  if (strcmp(mode, "finish")) barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("fail_app %s: finished\n", mode);
    /* Now: mode finish exits with 3, and mpirun may end a rank still in MPI_Finalize once another
       has exited with it, before exit() would write the buffered line. */
    fflush(stdout);
  }
  MPI_Finalize();
  return !strcmp(mode, "finish") ? 3 : 0;
}
