// Whether htrace-correct runs as one of several processes an MPI launcher started, told from the
// environment before MPI is touched: a serial run then skips MPI_Init (Open MPI's singleton start
// alone takes about 0.5 s).
#ifndef HTRACE_CORRECT_LAUNCHER_H
#define HTRACE_CORRECT_LAUNCHER_H

#include <functional>

namespace htrace::correct {

// True unless the environment shows a single process. The launchers' variables:
// - job sizes: OMPI_COMM_WORLD_SIZE (Open MPI's mpirun), PMI_SIZE (MPICH's Hydra, Slurm's PMI),
//   MPI_LOCALNRANKS (Hydra, processes on this node), SLURM_STEP_NUM_TASKS (srun);
// - ranks only: OMPI_COMM_WORLD_RANK, PMIX_RANK (any PMIx launcher), PMI_RANK, SLURM_PROCID.
// A size above 1 (or one that is not a number) means MPI; else a size of 1 means serial (mpirun
// -np 1 needs no MPI either); else any rank variable means MPI, since its launcher does not say how
// many processes it started. No variable at all: serial. Running serially among several processes
// would have each write the whole output, so every doubt goes to MPI.
bool several_processes(const std::function<const char*(const char*)>& getenv);

} // namespace htrace::correct
#endif
