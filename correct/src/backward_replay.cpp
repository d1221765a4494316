// Backward amortization: each receive tells its senders how late they may move (one exchange
// across correction ranks), then every forward jump is spread over the time before its receive.
#include "replay_state.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace htrace::correct {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

class BackwardReplay {
public:
  explicit BackwardReplay(ReplayState& s) : s_(s), m_(s.model) {}

  void run() {
    publish_receive_times();
    uint64_t moved = 0;
    for (const RemoteValue& v : s_.exchange.run(moved))
      deliver(v);
    for (LocationModel& loc : m_.locations)
      amortize(loc);
  }

private:
  // Receivers give their senders the bound ub(S) = LC(R) - l_min.
  void publish_receive_times() {
    for (const LocationModel& loc : m_.locations)
      for (const Link& link : loc.links) {
        if (link.role != LinkRole::Receive) continue;
        Channel& ch = s_.channel(link.channel);
        const int64_t v = loc.lc[link.event];
        switch (ch.key.type) {
        case ChannelType::Local:
          s_.local_values(ch).ub_neg.add(-(v - s_.ctx.latencies.omp), loc.location);
          break;
        case ChannelType::P2P: {
          const uint32_t src = static_cast<uint32_t>(ch.key.a);
          if (s_.local(src))
            ch.limit = v - s_.ctx.latencies.mpi(src, loc.process);
          else
            s_.exchange.post(s_.owner(src), {ch.key, v, 0, loc.process, RemoteUse::Backward});
          break;
        }
        case ChannelType::Collective:
          s_.collective(ch).add_end(s_.member(loc.process, ch), v, s_.ctx.latencies);
          for (int r : s_.remote_owners(ch.key.a))
            s_.exchange.post(r, {ch.key, v, 0, loc.process, RemoteUse::Backward});
          break;
        }
      }
  }

  void deliver(const RemoteValue& v) {
    const uint32_t id = m_.channels.find(v.key);
    if (id == UINT32_MAX) return; // no sender here (its absence was reported forward)
    Channel& ch = s_.channel(id);
    if (v.key.type == ChannelType::P2P) {
      const int64_t lmin = s_.ctx.latencies.mpi(static_cast<uint32_t>(v.key.a), v.process);
      ch.limit = v.value - lmin;
    } else if (ch.collective != UINT32_MAX) {
      s_.collective(ch).add_end(s_.member(v.process, ch), v.value, s_.ctx.latencies);
    }
  }

  int64_t upper_bound(const LocationModel& loc, const Link& link) const {
    const Channel& ch = s_.channel(link.channel);
    if (ch.key.type == ChannelType::Collective)
      return s_.collective(ch).begin_upper_bound(s_.member(loc.process, ch), s_.ctx.latencies);
    if (ch.key.type == ChannelType::P2P) return ch.limit == kNoTime ? kUnbounded : ch.limit;
    const int64_t neg = s_.local_values(ch).ub_neg.excluding(loc.location);
    return neg == kNoTime ? kUnbounded : -neg;
  }

  // Spreads each forward jump over the time before its receive (piecewise-linear ramp bounded by
  // the senders' upper bounds), then counts relations the result still violates.
  void amortize(LocationModel& loc) {
    if (loc.links.empty()) return;
    // Upper bounds of this location's contributing events: per link (for the violation count)
    // and per event, ascending and sparse (for the ramps).
    link_ub_.clear();
    std::vector<std::pair<uint32_t, int64_t>> ub;
    for (const Link& link : loc.links) {
      if (link.role != LinkRole::Contribute) continue;
      const int64_t b = upper_bound(loc, link);
      link_ub_.push_back(b);
      if (!ub.empty() && ub.back().first == link.event)
        ub.back().second = std::min(ub.back().second, b);
      else
        ub.emplace_back(link.event, b);
    }
    if (!loc.jumps.empty()) {
      // Ramps read the forward times and write the shifted ones; the buffer is reused (and its
      // pages stay mapped) from one location to the next.
      shifted_.assign(loc.lc.begin(), loc.lc.end());
      for (const Jump& j : loc.jumps)
        ramp(loc, j, ub, shifted_);
      loc.lc.swap(shifted_);
    }
    size_t k = 0;
    for (const Link& link : loc.links) {
      if (link.role != LinkRole::Contribute) continue;
      if (loc.lc[link.event] > link_ub_[k++])
        s_.stats.violations_after[static_cast<int>(s_.channel(link.channel).kind)]++;
    }
  }

  // One jump's ramp: linear with slope m before the receive, cut at the send that would pass its
  // bound with the steepest required slope (the pivot), recursively from there.
  void ramp(const LocationModel& loc, const Jump& j,
            const std::vector<std::pair<uint32_t, int64_t>>& ub,
            EventArray<int64_t>& shifted) const {
    const double m = s_.ctx.options->slope;
    uint32_t anchor = j.event;
    double x_a = double(loc.lc[anchor] - j.amount), d_a = double(j.amount);
    while (d_a > 0 && anchor > 0) {
      const double left = std::max(double(loc.lc[0]), x_a - d_a / m);
      uint32_t pivot = UINT32_MAX;
      double pivot_slope = 0, pivot_allow = 0;
      auto it = std::lower_bound(ub.begin(), ub.end(),
                                 std::make_pair(anchor, std::numeric_limits<int64_t>::min()));
      while (it != ub.begin()) {
        --it;
        const double x = double(loc.lc[it->first]);
        if (x < left) break;
        if (it->second == kUnbounded) continue;
        const double allow = std::max(0.0, double(it->second - loc.lc[it->first]));
        if (d_a * (x - left) / (x_a - left) <= allow) continue;
        const double slope = (d_a - allow) / (x_a - x);
        if (pivot == UINT32_MAX || slope > pivot_slope)
          pivot = it->first, pivot_slope = slope, pivot_allow = allow;
      }
      const uint32_t stop = pivot == UINT32_MAX ? 0 : pivot;
      for (uint32_t i = anchor; i-- > stop && double(loc.lc[i]) >= left;) {
        const double s =
            pivot == UINT32_MAX
                ? d_a * (double(loc.lc[i]) - left) / (x_a - left)
                : pivot_allow + pivot_slope * (double(loc.lc[i]) - double(loc.lc[pivot]));
        shifted[i] = std::max(shifted[i], loc.lc[i] + static_cast<int64_t>(std::floor(s)));
      }
      if (pivot == UINT32_MAX) break;
      anchor = pivot, x_a = double(loc.lc[pivot]), d_a = pivot_allow;
    }
  }

  ReplayState& s_;
  LocalModel& m_;
  EventArray<int64_t> shifted_;
  std::vector<int64_t> link_ub_; // upper bound per contributing link of the current location
};

} // namespace

void backward_replay(ReplayState& state) {
  BackwardReplay(state).run();
}

} // namespace htrace::correct
