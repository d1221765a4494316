// Collective operations as logical messages. Each correction rank aggregates the begins (forward)
// and ends (backward) of one collective instance it takes part in, whether the member is its own
// or arrived by message; which ends depend on which begins, and the bounds that follow, are the
// rules htrace-report evaluates too (relations/collective_bounds.h).
#ifndef HTRACE_CORRECT_COLLECTIVE_H
#define HTRACE_CORRECT_COLLECTIVE_H

#include "correct/latencies.h"
#include "correct/model.h"
#include "relations/collective_bounds.h"

#include <cstdint>

namespace htrace::correct {

using relations::CollectiveMember;

struct CollectiveInstance : relations::CollectiveBounds {
  uint32_t members = 0;     // communicator size
  uint32_t begins_seen = 0; // members whose begin arrived (each counted once)
  uint32_t channel = 0;     // its channel (ChannelTable::channels index)
};

} // namespace htrace::correct
#endif
