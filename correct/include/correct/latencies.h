// Minimum message latencies (l_min) of the clock condition, per pair of processes.
#ifndef HTRACE_CORRECT_LATENCIES_H
#define HTRACE_CORRECT_LATENCIES_H

#include "correct/definitions.h"
#include "relations/collective_bounds.h"

#include <cstdint>

namespace htrace::correct {

// intra and inter (relations::MpiLatencies) as the collective rules take them.
struct Latencies : relations::MpiLatencies {
  int64_t omp = 0;
  const Definitions* defs = nullptr;
  bool same_node(uint32_t process_a, uint32_t process_b) const {
    return defs->processes[process_a].node == defs->processes[process_b].node;
  }
  int64_t mpi(uint32_t process_a, uint32_t process_b) const {
    return same_node(process_a, process_b) ? intra : inter;
  }
};

} // namespace htrace::correct
#endif
