// What the forward and backward replay share: the model, the context, the exchange with other
// correction ranks, and how a logical message turns into a bound.
#ifndef HTRACE_CORRECT_REPLAY_STATE_H
#define HTRACE_CORRECT_REPLAY_STATE_H

#include "correct/collective.h"
#include "correct/exchange.h"
#include "correct/replay.h"

#include <unordered_map>
#include <vector>

namespace htrace::correct {

class ReplayState {
public:
  ReplayState(const ReplayContext& c, LocalModel& m, ReplayStats& s)
      : ctx(c), model(m), stats(s), ranks(*c.ranks), rank(ranks.rank()), size(ranks.size()),
        exchange(ranks) {}

  ReplayContext ctx; // its latencies are final once observe_latencies has run
  LocalModel& model;
  ReplayStats& stats;
  RankGroup& ranks;
  const int rank, size; // this correction rank and their number
  Exchange exchange;

  Channel& channel(uint32_t id) { return model.channels.channels[id]; }
  const Channel& channel(uint32_t id) const { return model.channels.channels[id]; }
  int owner(uint32_t process) const { return ctx.owner[process]; }
  bool local(uint32_t process) const { return ctx.owner[process] == rank; }
  ChannelKey key(const Channel& ch) const { return model.channels.key(ch); }
  LocalValues& local_values(const Channel& ch) { return model.channels.local_values[ch.slot]; }
  const LocalValues& local_values(const Channel& ch) const {
    return model.channels.local_values[ch.slot];
  }
  CollectiveInstance& collective(const Channel& ch) { return model.collectives[ch.slot]; }
  const CollectiveInstance& collective(const Channel& ch) const {
    return model.collectives[ch.slot];
  }
  // The member a process is in the channel's communicator.
  CollectiveMember member(uint32_t process, const Channel& ch) const;
  // Correction ranks other than this one that own members of a communicator.
  const std::vector<int>& remote_owners(uint64_t comm);

  // Posts a logical message's value to correction rank `to`. `process`: the contributing
  // (forward) or receiving (backward) process; `input`: a collective contribution's input time.
  void post(int to, const Channel& ch, uint32_t process, int64_t value, int64_t input = 0);

  // Room in the exchange for a value per p2p message that crosses correction ranks: for the
  // receivers of this rank's sends, or for the senders of its receives. There are hundreds of
  // thousands; queues grown step by step would copy and fault in their memory repeatedly. (One
  // run header per stream is counted: where streams interleave, the queue grows beyond that.)
  void reserve_p2p_values(bool to_receivers);

  // Earliest time a receive of `loc` may take place because of `ch` (kNoTime: unconstrained);
  // `input` uses the pre-synchronized input times of the contributions instead.
  int64_t receive_bound(const LocationModel& loc, const Channel& ch, bool input = false) const;

  // One step of the controller: the forward time of an event from its predecessor's.
  int64_t step(int64_t prev_lc, int64_t prev_t, int64_t t) const {
    // Events of one location keep their order, at least delta apart where the input had them
    // apart. Equal input times stay equal: only a relation may pull them apart.
    const int64_t gap = t > prev_t ? delta_ : 0;
    int64_t v = t > prev_lc + gap ? t : prev_lc + gap;
    // No offset carried over (most events): the controller term, at most prev_t + (t - prev_t),
    // cannot exceed v, so the floating-point step is skipped without changing any result.
    if (prev_lc == prev_t) return v;
    const int64_t controlled = prev_lc + static_cast<int64_t>(gamma_ * double(t - prev_t));
    return controlled > v ? controlled : v;
  }

private:
  double gamma_ = ctx.options->gamma;
  int64_t delta_ = ctx.options->delta_ns;
  std::unordered_map<uint64_t, std::vector<int>> remote_owners_;
};

// The latencies the input shows (observed_latencies.cpp), after round 0 and before the first pass;
// lowers the context's l_min where the command line did not fix it.
void observe_latencies(ReplayState& state);
void forward_replay(ReplayState& state);
// The receives' bounds on their senders (ub = receive time - l_min), across correction ranks.
void backward_limits(ReplayState& state);

// The final times of one location, in event order: the forward times (the controller again
// between events with links, whose times the forward replay kept) with the backward
// amortization's ramps applied. Only the ramps are held in memory, not a time per event.
class FinalTimes {
public:
  // Computes the ramps and counts the relations still violated (ReplayStats::violations_after).
  FinalTimes(ReplayState& state, const LocationModel& loc);
  FinalTimes(const FinalTimes&) = delete;
  FinalTimes& operator=(const FinalTimes&) = delete;

  // Fills up to `max` next final times, and their input times; 0 at the end of the location.
  size_t next(int64_t* out, int64_t* input, size_t max);

private:
  // A contributing event: its upper bound (tightest of its links) and forward time.
  struct Bound {
    uint32_t event;
    int64_t ub, lc;
  };
  // Events [from, to) with forward time x >= left move by floor(shift(x)) (at most: where ramps
  // overlap, the largest move wins).
  struct Ramp {
    uint32_t from, to;
    bool pivot;
    double left, a, b, c;
    double shift(double x) const;
  };
  // Ramps apply from an event on (the ones cut at a pivot: `from`) or from a forward time on
  // (the others: `left`); both grow with the event, so a sweep in event order activates each
  // ramp once and keeps only the ramps that move the current event.
  struct Ramps {
    std::vector<Ramp> by_event; // cut at a pivot, ascending `from`
    std::vector<Ramp> by_time;  // the others, ascending `left`
  };
  // Applies the ramps to forward times given in ascending event order.
  class Sweep {
  public:
    explicit Sweep(const Ramps& ramps) : ramps_(&ramps) {}
    // Most events are moved by no ramp: that case is decided inline.
    int64_t final_time(uint32_t event, int64_t lc) {
      if (active_.empty() && event < next_from_ && double(lc) < next_left_) return lc;
      return ramped_time(event, lc);
    }

  private:
    int64_t ramped_time(uint32_t event, int64_t lc);
    const Ramps* ramps_;
    size_t next_event_ = 0, next_time_ = 0;
    // `from` and `left` of the next ramps to start (0 before the first call: not known yet).
    uint32_t next_from_ = 0;
    double next_left_ = 0;
    std::vector<const Ramp*> active_;
  };

  int64_t upper_bound(const Link& link) const;
  void add_ramps(uint32_t event, int64_t lc, int64_t amount, const std::vector<Bound>& bounds);

  ReplayState& s_;
  const LocationModel& loc_;
  int64_t first_lc_ = 0; // forward time of event 0 (ramps start no earlier)
  Ramps ramps_;
  Sweep sweep_{ramps_};
  uint32_t event_ = 0;
  InputTimes::Reader input_{loc_.input, 0}; // at event_
  size_t link_ = 0;
  int64_t prev_lc_ = 0, prev_t_ = 0;
};

} // namespace htrace::correct
#endif
