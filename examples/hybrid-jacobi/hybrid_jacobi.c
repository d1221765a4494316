/* hybrid-jacobi: a Jacobi solver for the 2-D Laplace equation, MPI + OpenMP.
 *
 * The grid is split into row blocks, one per rank; each iteration exchanges halo rows with the
 * neighbours (MPI_Sendrecv on the master thread) and updates the block in an OpenMP parallel
 * region. The region deliberately uses the OpenMP constructs htrace records:
 *   - a worksharing loop with a max reduction and its implicit barrier;
 *   - an omp lock (per-thread work counter) and a nest lock;
 *   - a critical section (largest local change and its row);
 *   - tasks (row checksums) created in a single construct, with taskwait;
 *   - an explicit barrier and a masked region;
 *   - every few iterations a nested parallel region of 2 threads (needs max-active-levels >= 2);
 *   - with MPI_THREAD_MULTIPLE, the team's last thread calls MPI_Allreduce itself.
 *
 * usage: hybrid-jacobi [iterations [rows-per-rank [columns]]]   (defaults 20 64 256)
 */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int parse_positive(const char* text, const char* what) {
  char* end = NULL;
  long value = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value <= 0 || value > 1000000) {
    fprintf(stderr, "hybrid-jacobi: error: '%s': %s must be a positive integer\n", text, what);
    exit(2);
  }
  return (int)value;
}

/* Dirichlet boundary: 1 on the global top edge, 0 elsewhere. */
static void initialize(double* grid, int rows, int cols, int rank) {
  for (int i = 0; i < (rows + 2) * cols; ++i)
    grid[i] = 0.0;
  if (rank == 0)
    for (int j = 0; j < cols; ++j)
      grid[j] = 1.0;
}

static void exchange_halos(double* grid, int rows, int cols, int rank, int size, MPI_Comm comm) {
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  /* first owned row -> up's bottom halo; last owned row -> down's top halo */
  MPI_Sendrecv(&grid[1 * cols], cols, MPI_DOUBLE, up, 1, &grid[(rows + 1) * cols], cols, MPI_DOUBLE,
               down, 1, comm, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&grid[rows * cols], cols, MPI_DOUBLE, down, 2, &grid[0], cols, MPI_DOUBLE, up, 2,
               comm, MPI_STATUS_IGNORE);
}

static double row_checksum(const double* row, int cols) {
  double sum = 0.0;
  for (int j = 0; j < cols; ++j)
    sum += row[j] * (double)(j + 1);
  return sum;
}

/* A nested team refines the checksum of the first rows (small, just to exercise nesting). */
static double nested_checksum(const double* grid, int rows, int cols) {
  double sum = 0.0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  {
#pragma omp for
    for (int i = 1; i <= rows; ++i)
      sum += grid[i * cols + cols / 2];
  }
  return sum;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    fprintf(stderr, "hybrid-jacobi: error: MPI provides no MPI_THREAD_FUNNELED support\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iterations = argc > 1 ? parse_positive(argv[1], "iterations") : 20;
  int rows = argc > 2 ? parse_positive(argv[2], "rows per rank") : 64;
  int cols = argc > 3 ? parse_positive(argv[3], "columns") : 256;
  int multiple = provided == MPI_THREAD_MULTIPLE;
  MPI_Comm thread_comm; /* used by one worker thread per rank under MPI_THREAD_MULTIPLE */
  MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm);
  omp_set_max_active_levels(2);

  double* grid = malloc(sizeof(double) * (size_t)(rows + 2) * (size_t)cols);
  double* next = malloc(sizeof(double) * (size_t)(rows + 2) * (size_t)cols);
  double* checksums = malloc(sizeof(double) * (size_t)rows);
  if (!grid || !next || !checksums) {
    fprintf(stderr, "hybrid-jacobi: error: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  initialize(grid, rows, cols, rank);
  initialize(next, rows, cols, rank);

  omp_lock_t count_lock;
  omp_nest_lock_t stats_lock;
  omp_init_lock(&count_lock);
  omp_init_nest_lock(&stats_lock);
  long updates = 0, nest_updates = 0, thread_reductions = 0;
  double global_change = 0.0, checksum = 0.0, nested = 0.0;

  for (int it = 0; it < iterations; ++it) {
    exchange_halos(grid, rows, cols, rank, size, MPI_COMM_WORLD);
    double local_change = 0.0;
    int worst_row = -1;
#pragma omp parallel
    {
      double my_change = 0.0;
      long my_rows = 0;
#pragma omp for reduction(max : local_change)
      for (int i = 1; i <= rows; ++i) {
        for (int j = 1; j < cols - 1; ++j) {
          double v = 0.25 * (grid[(i - 1) * cols + j] + grid[(i + 1) * cols + j] +
                             grid[i * cols + j - 1] + grid[i * cols + j + 1]);
          double d = fabs(v - grid[i * cols + j]);
          if (d > local_change) local_change = d;
          if (d > my_change) my_change = d;
          next[i * cols + j] = v;
        }
        ++my_rows;
      }
      omp_set_lock(&count_lock);
      updates += my_rows;
      omp_unset_lock(&count_lock);

      omp_set_nest_lock(&stats_lock);
      /* re-acquired by its owner: only the outer pair is a lock event */
      omp_set_nest_lock(&stats_lock);
      ++nest_updates;
      omp_unset_nest_lock(&stats_lock);
      omp_unset_nest_lock(&stats_lock);

#pragma omp critical(worst_row)
      {
        if (my_change >= local_change && worst_row < 0) worst_row = omp_get_thread_num();
      }

#pragma omp single
      {
        for (int i = 0; i < rows; i += 8) {
#pragma omp task firstprivate(i)
          for (int k = i; k < i + 8 && k < rows; ++k)
            checksums[k] = row_checksum(&next[(k + 1) * cols], cols);
        }
#pragma omp taskwait
      }

      if (multiple && omp_get_thread_num() == omp_get_num_threads() - 1) {
        long one = 1, sum = 0; /* one MPI call from a worker thread per rank and iteration */
        MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, thread_comm);
        thread_reductions += sum;
      }
#pragma omp barrier
#pragma omp masked
      {
        if (it % 5 == 0) nested += nested_checksum(next, rows, cols);
      }
    }
    double* swap = grid;
    grid = next;
    next = swap;
    MPI_Allreduce(&local_change, &global_change, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  for (int k = 0; k < rows; ++k)
    checksum += checksums[k];
  double total = 0.0;
  MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("hybrid-jacobi: %d ranks x %d threads, %d iterations, change %.6e, checksum %.6e, "
           "nested %.3e, updates %ld, nest-lock updates %ld, thread reductions %ld\n",
           size, omp_get_max_threads(), iterations, global_change, total, nested, updates,
           nest_updates, thread_reductions);
  omp_destroy_lock(&count_lock);
  omp_destroy_nest_lock(&stats_lock);
  free(grid);
  free(next);
  free(checksums);
  MPI_Comm_free(&thread_comm);
  MPI_Finalize();
  return 0;
}
