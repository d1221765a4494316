#include "correct/launcher.h"

#include <cerrno>
#include <cstdlib>

namespace htrace::correct {

bool several_processes(const std::function<const char*(const char*)>& getenv) {
  bool single = false;
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS"}) {
    const char* value = getenv(name);
    if (!value) continue;
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(value, &end, 10);
    if (end == value || *end != '\0' || errno != 0 || n != 1) return true;
    single = true;
  }
  if (single) return false;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (getenv(name)) return true;
  return false;
}

} // namespace htrace::correct
