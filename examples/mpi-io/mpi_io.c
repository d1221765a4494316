/* MPI-IO with every kind of access, with results checked by the program. On FILE (default
 * "mpi_io_example.dat" in the working directory), opened by all ranks (CREATE | RDWR):
 *   write_at      1024 bytes at rank * 1024                    (independent, explicit offset)
 *   write_at_all   256 bytes at (size + rank) * 1024            (collective)
 *   sync
 *   iwrite_at      128 bytes at (2 * size + rank) * 1024, MPI_Wait
 *   seek           to rank * 1024 (MPI_SEEK_SET), then read 512 bytes (individual pointer)
 *   read_all_begin / read_all_end   100 bytes at the pointer (split collective)
 *   iread_at        64 bytes at rank * 1024, MPI_Test until done
 *   read_at       4096 bytes at the end of the file minus 100: 100 bytes come back
 * then close; rank 0 deletes the file. Every rank also writes 10 bytes to its own file
 * "mpi_io_rank<R>.dat" opened on MPI_COMM_SELF (WRONLY | CREATE | DELETE_ON_CLOSE) and closes it.
 * Prints "mpi-io ok ranks=N" when every byte read back is right, exits 1 otherwise. The tests
 * derive the expected OTF2 records from this description (tests/rma_io). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
static void expect(int rank, const char* what, long got, long want) {
  if (got != want) {
    fprintf(stderr, "rank %d: %s = %ld, expected %ld\n", rank, what, got, want);
    ++failures;
  }
}

static int count_of(MPI_Status* status) {
  int n = -1;
  MPI_Get_count(status, MPI_BYTE, &n);
  return n;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* name = argc > 1 ? argv[1] : "mpi_io_example.dat";

  char block[4096];
  for (int i = 0; i < 1024; ++i)
    block[i] = (char)('a' + (rank + i) % 26);
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
      MPI_SUCCESS) {
    fprintf(stderr, "rank %d: cannot open %s\n", rank, name);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Status status;
  MPI_File_write_at(fh, (MPI_Offset)rank * 1024, block, 1024, MPI_BYTE, &status);
  expect(rank, "write_at count", count_of(&status), 1024);
  MPI_File_write_at_all(fh, (MPI_Offset)(size + rank) * 1024, block, 256, MPI_BYTE,
                        MPI_STATUS_IGNORE);
  MPI_File_sync(fh);
  MPI_Request request;
  MPI_File_iwrite_at(fh, (MPI_Offset)(2 * size + rank) * 1024, block, 128, MPI_BYTE, &request);
  MPI_Wait(&request, &status);
  expect(rank, "iwrite_at count", count_of(&status), 128);
  MPI_File_sync(fh); /* the reads below see every rank's writes */
  MPI_Barrier(MPI_COMM_WORLD);

  char in[4096];
  MPI_File_seek(fh, (MPI_Offset)rank * 1024, MPI_SEEK_SET);
  MPI_File_read(fh, in, 512, MPI_BYTE, &status);
  expect(rank, "read count", count_of(&status), 512);
  expect(rank, "read bytes", memcmp(in, block, 512) == 0, 1);
  MPI_File_read_all_begin(fh, in, 100, MPI_BYTE);
  MPI_File_read_all_end(fh, in, &status);
  expect(rank, "split read count", count_of(&status), 100);
  expect(rank, "split read bytes", memcmp(in, block + 512, 100) == 0, 1);
  MPI_File_iread_at(fh, (MPI_Offset)rank * 1024, in, 64, MPI_BYTE, &request);
  int done = 0;
  while (!done)
    MPI_Test(&request, &done, &status);
  expect(rank, "iread_at count", count_of(&status), 64);
  MPI_Offset end = 0;
  MPI_File_get_size(fh, &end);
  expect(rank, "file size", (long)end, (long)(2 * size + size - 1) * 1024 + 128);
  MPI_File_read_at(fh, end - 100, in, 4096, MPI_BYTE, &status);
  expect(rank, "short read count", count_of(&status), 100);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) MPI_File_delete(name, MPI_INFO_NULL);

  char own[64];
  snprintf(own, sizeof own, "mpi_io_rank%d.dat", rank);
  MPI_File self;
  MPI_File_open(MPI_COMM_SELF, own, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                MPI_INFO_NULL, &self);
  MPI_File_write(self, block, 10, MPI_BYTE, &status);
  expect(rank, "own file count", count_of(&status), 10);
  MPI_File_close(&self);

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) printf("mpi-io ok ranks=%d\n", size);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
