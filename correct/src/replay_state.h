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
      : ctx(c), model(m), stats(s), exchange(c.comm) {}

  const ReplayContext& ctx;
  LocalModel& model;
  ReplayStats& stats;
  Exchange exchange;

  Channel& channel(uint32_t id) { return model.channels.channels[id]; }
  const Channel& channel(uint32_t id) const { return model.channels.channels[id]; }
  int owner(uint32_t process) const { return ctx.owner[process]; }
  bool local(uint32_t process) const { return ctx.owner[process] == ctx.rank; }
  LocalValues& local_values(const Channel& ch) { return model.channels.local_values[ch.local]; }
  const LocalValues& local_values(const Channel& ch) const {
    return model.channels.local_values[ch.local];
  }
  CollectiveInstance& collective(const Channel& ch) { return model.collectives[ch.collective]; }
  const CollectiveInstance& collective(const Channel& ch) const {
    return model.collectives[ch.collective];
  }
  // The member a process is in the channel's communicator.
  CollectiveMember member(uint32_t process, const Channel& ch) const;
  // Correction ranks other than this one that own members of a communicator.
  const std::vector<int>& remote_owners(uint64_t comm);

  // Earliest time a receive of `loc` may take place because of `ch` (kNoTime: unconstrained);
  // `input` uses the pre-synchronized input times of the contributions instead.
  int64_t receive_bound(const LocationModel& loc, const Channel& ch, bool input = false) const;

  // One step of the controller: the forward time of an event from its predecessor's.
  int64_t step(int64_t prev_lc, int64_t prev_t, int64_t t) const {
    // Events of one location stay at least delta apart, even where the input had equal times.
    int64_t v = t > prev_lc + delta_ ? t : prev_lc + delta_;
    // No offset carried over (most events): the controller term, at most prev_t + (t - prev_t),
    // cannot exceed v, so the floating-point step is skipped without changing any result.
    if (prev_lc == prev_t) return v;
    const int64_t controlled = prev_lc + static_cast<int64_t>(gamma_ * double(t - prev_t));
    return controlled > v ? controlled : v;
  }
  // Forward time of event i, whose pre-synchronized input time is t, without its receives' bounds.
  int64_t unbound_time(const LocationModel& loc, uint32_t i, int64_t t) const {
    return i == 0 ? t : step(loc.lc[i - 1], loc.presync.apply(loc.input[i - 1]), t);
  }
  int64_t unbound_time(const LocationModel& loc, uint32_t i) const {
    return unbound_time(loc, i, loc.presync.apply(loc.input[i]));
  }

private:
  double gamma_ = ctx.options->gamma;
  int64_t delta_ = ctx.options->delta_ns;
  std::unordered_map<uint64_t, std::vector<int>> remote_owners_;
};

void forward_replay(ReplayState& state);
void backward_replay(ReplayState& state);

} // namespace htrace::correct
#endif
