/* ompt-events: many small OpenMP constructs, timed inside the program, for the OMPT tool's cost
 * per event. Each of REGIONS parallel regions runs an explicit barrier, one omp lock/unlock and one
 * critical section per thread (plus the region's implicit barrier). MPI is initialised only so that
 * the preloaded tracer starts; the timed loop makes no MPI calls.
 *
 * usage: ompt-events [REGIONS [REPS]]   prints one line per repetition: "seconds=<s> regions=<n>"
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int regions = argc > 1 ? atoi(argv[1]) : 20000;
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  if (regions <= 0 || reps <= 0) {
    fprintf(stderr, "ompt-events: error: REGIONS and REPS must be positive\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  omp_lock_t lock;
  omp_init_lock(&lock);
  long counter = 0;
  for (int r = 0; r < reps; ++r) {
    double start = omp_get_wtime();
    for (int i = 0; i < regions; ++i) {
#pragma omp parallel
      {
#pragma omp barrier
        omp_set_lock(&lock);
        ++counter;
        omp_unset_lock(&lock);
#pragma omp critical
        ++counter;
      }
    }
    printf("seconds=%.9f regions=%d\n", omp_get_wtime() - start, regions);
  }
  omp_destroy_lock(&lock);
  if (counter != 2L * regions * reps * omp_get_max_threads())
    fprintf(stderr, "ompt-events: warning: counter %ld\n", counter);
  MPI_Finalize();
  return 0;
}
