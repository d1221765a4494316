// Forward and backward replay of the controlled logical clock over the owned locations.
//
// Inside a correction rank, locations are cursors: a location that waits for a message from
// another owned location yields to the others. Messages from other correction ranks never block:
// the forward replay first assumes they impose nothing, then exchanges all cross-rank values in
// bulk and re-evaluates, from the affected event on, only the locations whose receives a value
// actually moves; this repeats until no value changes. The clock condition is monotone, so this
// converges to exactly the sequential result (output identical for every P), in as many rounds
// as the longest chain of binding cross-rank messages, usually two or three.
#ifndef HTRACE_CORRECT_REPLAY_H
#define HTRACE_CORRECT_REPLAY_H

#include "correct/definitions.h"
#include "correct/latencies.h"
#include "correct/model_reader.h"
#include "correct/options.h"

#include <array>
#include <mpi.h>

namespace htrace::correct {

struct ReplayStats {
  std::array<uint64_t, kMessageKinds> messages{}, violations_before{}, violations_after{};
  uint64_t jumps = 0;
  uint64_t rounds = 0;      // forward exchange rounds (1 when everything is on one rank)
  uint64_t reevaluated = 0; // events evaluated again in later rounds
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
