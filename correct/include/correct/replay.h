// Forward and backward replay of the controlled logical clock over the owned locations.
//
// Inside a correction rank, locations are cursors: a location that waits for a message from
// another owned location yields to the others. Messages from other correction ranks never block:
// the forward replay first takes their input times as lower bounds (round 0), then exchanges
// the values that moved in bulk and re-evaluates, from the affected event on, only the locations
// whose receives a value actually moves; this repeats until no value changes. The clock condition
// is monotone, so this converges to exactly the sequential result (output identical for every P),
// in as many rounds as the longest chain of binding cross-rank messages, usually two or three.
#ifndef HTRACE_CORRECT_REPLAY_H
#define HTRACE_CORRECT_REPLAY_H

#include "correct/definitions.h"
#include "correct/latencies.h"
#include "correct/model_reader.h"
#include "correct/options.h"
#include "correct/rank_group.h"
#include "correct/time_source.h"

#include <array>
#include <memory>
#include <string>

namespace htrace::correct {

// What showed an observed latency: the kinds of relation whose gaps gave it (bits).
enum ObservedBy : int64_t { kByMessage = 1, kByCollective = 2, kByOpenMp = 4, kRoundTrip = 8 };

// The smallest latency of a class the input shows, which bounds l_min (observed_latencies.cpp);
// kNoTime where the trace proves nothing.
struct ObservedLatency {
  int64_t ns = kNoTime;
  int64_t by = 0; // ObservedBy bits
};
struct ObservedLatencies {
  ObservedLatency intra, inter, omp;
};

// What showed it, in words: "messages within one clock", "collectives' round trips across
// clocks", ... (empty when nothing did).
std::string describe(const ObservedLatency& observed);

struct ReplayStats {
  std::array<uint64_t, kMessageKinds> messages{}, violations_before{}, violations_after{};
  uint64_t jumps = 0;
  uint64_t rounds = 0;      // forward exchange rounds (0 when everything is on one rank)
  uint64_t reevaluated = 0; // events evaluated again in later rounds
  uint64_t presynced_locations = 0;
  ObservedLatencies observed;
};

struct ReplayContext {
  const Definitions* defs;
  const Options* options;
  Latencies latencies;
  std::vector<int> owner; // process index -> correction rank
  RankGroup* ranks;       // the correction ranks, numbered as in `owner`; outlives the replay
};

class ReplayState;
class FinalTimes;

// The controlled logical clock over the owned locations. run() does everything that needs other
// correction ranks; the final timestamps are then produced location by location as a TimeSource
// (the backward amortization's ramps of a location are computed when it begins).
class Replay final : public TimeSource {
public:
  Replay(const ReplayContext& ctx, LocalModel& model);
  ~Replay() override;
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  // Pre-synchronization, forward amortization and the exchange of the senders' upper bounds.
  // Collective over ctx.ranks. Throws std::runtime_error (the same message on every rank) on
  // unmatched messages or cyclic dependencies.
  void run();

  void begin(size_t index) override;
  size_t next(int64_t* out, int64_t* input, size_t max) override;

  // violations_after is complete once every location has begun.
  const ReplayStats& stats() const { return stats_; }
  // The minimum latencies used: the context's, lowered to what the trace shows (after run()).
  const Latencies& latencies() const;

private:
  ReplayStats stats_;
  // violations_after before the current location began (it may begin again).
  std::array<uint64_t, kMessageKinds> violations_before_location_{};
  size_t current_ = SIZE_MAX;
  LocalModel& model_;
  std::unique_ptr<ReplayState> state_;
  std::unique_ptr<FinalTimes> times_;
};

} // namespace htrace::correct
#endif
