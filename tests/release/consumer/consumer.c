/* Uses htrace's public C API from an installed prefix: the version of the headers and of the
 * loaded library agree, and MPIX_Harmonize releases every rank. Prints one line from rank 0. */
#include <htrace/mpix_harmonize.h>
#include <htrace/version.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, flag = 0, ok = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (strcmp(htrace_version(), HTRACE_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: header %s, library %s\n", HTRACE_VERSION_STRING, htrace_version());
    ok = 0;
  }
  if (MPIX_Harmonize(MPI_COMM_WORLD, &flag) != MPI_SUCCESS) ok = 0;
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0)
    printf("consumer: htrace %s (%d.%d.%d) %s\n", htrace_version(), HTRACE_VERSION_MAJOR,
           HTRACE_VERSION_MINOR, HTRACE_VERSION_PATCH, all ? "OK" : "FAILED");
  MPI_Finalize();
  return all ? 0 : 1;
}
