// Forward and backward replay of the controlled logical clock over the owned locations. Logical
// messages between correction processes travel as MPI messages in bulk-synchronous rounds; inside a
// process they are handed over through the channel table. Locations are cursors: a location that
// waits for a message yields to the others, so no process blocks on its own unprocessed location.
#ifndef HTRACE_CORRECT_REPLAY_H
#define HTRACE_CORRECT_REPLAY_H

#include "correct/definitions.h"
#include "correct/model_reader.h"
#include "correct/options.h"

#include <array>
#include <mpi.h>

namespace htrace::correct {

struct ReplayStats {
  std::array<uint64_t, kMessageKinds> messages{}, violations_before{}, violations_after{};
  uint64_t jumps = 0;
  uint64_t rounds = 0;
  uint64_t presynced_locations = 0;
};

struct ReplayContext {
  const Definitions* defs;
  const Options* options;
  Latencies latencies;
  std::vector<int> owner; // process index -> correction rank
  MPI_Comm comm;
  int rank = 0, size = 1;
};

// Pre-synchronization, forward amortization, backward amortization. Leaves the final timestamps
// in LocationModel::lc. Throws std::runtime_error (the same message on every rank) on unmatched
// messages or cyclic dependencies.
ReplayStats run_replay(const ReplayContext& ctx, LocalModel& model);

} // namespace htrace::correct
#endif
