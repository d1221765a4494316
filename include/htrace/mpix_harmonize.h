/* MPIX_Harmonize: synchronize the processes of a communicator in space and time.
 *
 * Collective over `comm` (an intracommunicator). Like MPI_Barrier, no rank returns before all have
 * entered; in addition every rank returns at the same instant of a global clock (a deadline chosen
 * by rank 0 of `comm`). `*flag` is a LOCAL result: 1 if this rank left at the deadline, 0 if it
 * reached the deadline too late (then the skew is not bounded; the next call resynchronizes and
 * gives more slack). Ranks may disagree on the flag; combine it yourself (e.g. MPI_Allreduce with
 * MPI_LAND over a batch of calls) to decide which measurements to keep.
 *
 * Exported by libhtrace.so; works with and without tracing (HTRACE_ENABLE=0). Its own traffic uses
 * PMPI on a private duplicate of `comm` and never appears in a trace. Tuning: HTRACE_HARMONIZE_*.
 * Returns MPI_SUCCESS or an MPI error class (MPI_ERR_COMM, MPI_ERR_ARG, MPI_ERR_OTHER when the
 * clock synchronization cannot run).
 */
#ifndef HTRACE_MPIX_HARMONIZE_H
#define HTRACE_MPIX_HARMONIZE_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

int MPIX_Harmonize(MPI_Comm comm, int* flag);

#ifdef __cplusplus
}
#endif

#endif /* HTRACE_MPIX_HARMONIZE_H */
