// Backward amortization: each receive tells its senders how late they may move (one exchange
// across correction ranks); then, location by location as the output is written, every forward
// jump is spread over the time before its receive.
#include "replay_state.h"

#include <algorithm>
#include <cmath>

namespace htrace::correct {
namespace {

class BackwardLimits {
public:
  explicit BackwardLimits(ReplayState& s) : s_(s), m_(s.model) {}

  void run() {
    publish_receive_times();
    s_.exchange.run();
    s_.exchange.for_each_received([&](const P2PRun& run) { deliver(run); },
                                  [&](const CollectiveValue& v) { deliver(v); });
  }

private:
  // Receivers give their senders the bound ub(S) = LC(R) - l_min.
  void publish_receive_times() {
    s_.reserve_p2p_values(/*to_receivers=*/false);
    for (const LocationModel& loc : m_.locations)
      for (size_t k = 0; k < loc.links.size(); ++k) {
        const Link& link = loc.links[k];
        if (link.role() != LinkRole::Receive) continue;
        Channel& ch = s_.channel(link.channel());
        const int64_t v = loc.link_lc[k];
        switch (ch.type) {
        case ChannelType::Local:
          s_.local_values(ch).ub_neg.add(-(v - s_.ctx.latencies.omp), loc.location);
          break;
        case ChannelType::P2P: {
          const uint32_t src = m_.channels.src(ch);
          if (s_.local(src))
            ch.limit = v - s_.ctx.latencies.mpi(src, loc.process);
          else
            s_.post(s_.owner(src), ch, loc.process, v);
          break;
        }
        case ChannelType::Collective: {
          s_.collective(ch).add_end(s_.member(loc.process, ch), v);
          for (int r : s_.remote_owners(s_.key(ch).a))
            s_.post(r, ch, loc.process, v);
          break;
        }
        }
      }
  }

  // Messages without a sender here are skipped: their absence was reported forward.
  void deliver(const P2PRun& run) {
    const P2PStream* stream = m_.channels.find_stream(run.src, run.dst, run.comm_tag);
    if (!stream) return;
    const int64_t lmin = s_.ctx.latencies.mpi(run.src, run.dst);
    for (size_t i = 0; i < run.count && run.first + i < stream->channels.size(); ++i) {
      const uint32_t id = stream->channels[run.first + i];
      if (id != UINT32_MAX) s_.channel(id).limit = run.values[i] - lmin;
    }
  }

  void deliver(const CollectiveValue& v) {
    const uint32_t id = m_.channels.find({ChannelType::Collective, v.comm, v.sequence, 0, 0});
    if (id == UINT32_MAX) return;
    Channel& ch = s_.channel(id);
    if (ch.slot != UINT32_MAX) s_.collective(ch).add_end(s_.member(v.process, ch), v.value);
  }

  ReplayState& s_;
  LocalModel& m_;
};

} // namespace

void backward_limits(ReplayState& state) {
  BackwardLimits(state).run();
}

// --- final times ---------------------------------------------------------------------------------

double FinalTimes::Ramp::shift(double x) const {
  return pivot ? a + b * (x - c) : a * (x - left) / (c - left);
}

int64_t FinalTimes::Sweep::ramped_time(uint32_t event, int64_t lc) {
  const double x = double(lc);
  const std::vector<Ramp>& by_event = ramps_->by_event;
  const std::vector<Ramp>& by_time = ramps_->by_time;
  while (next_event_ < by_event.size() && by_event[next_event_].from <= event)
    active_.push_back(&by_event[next_event_++]);
  while (next_time_ < by_time.size() && x >= by_time[next_time_].left)
    active_.push_back(&by_time[next_time_++]);
  next_from_ = next_event_ < by_event.size() ? by_event[next_event_].from : UINT32_MAX;
  next_left_ = next_time_ < by_time.size() ? by_time[next_time_].left : HUGE_VAL;
  int64_t best = lc;
  for (size_t k = 0; k < active_.size();) {
    const Ramp& r = *active_[k];
    if (r.to <= event) { // passed: a ramp ends at its receive (or pivot)
      active_[k] = active_.back();
      active_.pop_back();
      continue;
    }
    ++k;
    if (x >= r.left) best = std::max(best, lc + static_cast<int64_t>(std::floor(r.shift(x))));
  }
  return best;
}

FinalTimes::FinalTimes(ReplayState& s, const LocationModel& loc) : s_(s), loc_(loc) {
  if (loc.input.empty()) return;
  first_lc_ = !loc.links.empty() && loc.links[0].event == 0 ? loc.link_lc[0]
                                                            : loc.presync.apply(loc.input.at(0));
  // Without jumps there are no ramps: every final time is the forward time, and the violations
  // are counted straight from the bounds (most locations of a trace that needs little correction).
  if (loc.jumps.empty()) {
    for (size_t k = 0; k < loc.links.size(); ++k) {
      const Link& link = loc.links[k];
      if (link.role() == LinkRole::Contribute && loc.link_lc[k] > upper_bound(link))
        s_.stats.violations_after[static_cast<int>(s_.channel(link.channel()).kind)]++;
    }
    return;
  }
  // Upper bounds of this location's contributing events: per link (for the violation count)
  // and per event, ascending and sparse (for the ramps).
  size_t contributing = 0;
  for (const Link& link : loc.links)
    contributing += link.role() == LinkRole::Contribute;
  std::vector<int64_t> link_ub;
  std::vector<Bound> bounds;
  link_ub.reserve(contributing);
  bounds.reserve(contributing);
  for (size_t k = 0; k < loc.links.size(); ++k) {
    const Link& link = loc.links[k];
    if (link.role() != LinkRole::Contribute) continue;
    const int64_t b = upper_bound(link);
    link_ub.push_back(b);
    if (!bounds.empty() && bounds.back().event == link.event)
      bounds.back().ub = std::min(bounds.back().ub, b);
    else
      bounds.push_back({link.event, b, loc.link_lc[k]});
  }
  size_t k = 0;
  for (const Jump& j : loc.jumps) { // both ascending; every jump is at an event with links
    while (k < loc.links.size() && loc.links[k].event < j.event)
      ++k;
    if (k < loc.links.size()) add_ramps(j.event, loc.link_lc[k], j.amount, bounds);
  }
  std::sort(ramps_.by_event.begin(), ramps_.by_event.end(),
            [](const Ramp& a, const Ramp& b) { return a.from < b.from; });
  std::sort(ramps_.by_time.begin(), ramps_.by_time.end(),
            [](const Ramp& a, const Ramp& b) { return a.left < b.left; });
  // Relations the result still violates (at sends, collective begins and OpenMP releases).
  Sweep at_links(ramps_);
  size_t c = 0;
  for (size_t l = 0; l < loc.links.size(); ++l) {
    const Link& link = loc.links[l];
    if (link.role() != LinkRole::Contribute) continue;
    if (at_links.final_time(link.event, loc.link_lc[l]) > link_ub[c++])
      s_.stats.violations_after[static_cast<int>(s_.channel(link.channel()).kind)]++;
  }
}

int64_t FinalTimes::upper_bound(const Link& link) const {
  const Channel& ch = s_.channel(link.channel());
  if (ch.type == ChannelType::Collective)
    return s_.collective(ch).begin_upper_bound(s_.member(loc_.process, ch), s_.ctx.latencies);
  if (ch.type == ChannelType::P2P) return ch.limit == kNoTime ? kUnbounded : ch.limit;
  const int64_t neg = s_.local_values(ch).ub_neg.excluding(loc_.location);
  return neg == kNoTime ? kUnbounded : -neg;
}

// One jump's ramps: linear with slope m before the receive, cut at the send that would pass its
// bound with the steepest required slope (the pivot), recursively from there.
void FinalTimes::add_ramps(uint32_t event, int64_t lc, int64_t amount,
                           const std::vector<Bound>& bounds) {
  const double m = s_.ctx.options->slope;
  uint32_t anchor = event;
  double x_a = double(lc - amount), d_a = double(amount);
  while (d_a > 0 && anchor > 0) {
    const double left = std::max(double(first_lc_), x_a - d_a / m);
    const Bound* pivot = nullptr;
    double pivot_slope = 0, pivot_allow = 0;
    auto it = std::lower_bound(bounds.begin(), bounds.end(), anchor,
                               [](const Bound& b, uint32_t e) { return b.event < e; });
    while (it != bounds.begin()) {
      --it;
      const double x = double(it->lc);
      if (x < left) break;
      if (it->ub == kUnbounded) continue;
      const double allow = std::max(0.0, double(it->ub - it->lc));
      if (d_a * (x - left) / (x_a - left) <= allow) continue;
      const double slope = (d_a - allow) / (x_a - x);
      if (!pivot || slope > pivot_slope) pivot = &*it, pivot_slope = slope, pivot_allow = allow;
    }
    // Events [from, anchor) whose forward time is at least `left` move.
    Ramp r{pivot ? pivot->event : 0, anchor, pivot != nullptr, left, 0, 0, 0};
    if (pivot)
      r.a = pivot_allow, r.b = pivot_slope, r.c = double(pivot->lc);
    else
      r.a = d_a, r.c = x_a;
    if (r.from < r.to) (pivot ? ramps_.by_event : ramps_.by_time).push_back(r);
    if (!pivot) break;
    anchor = pivot->event, x_a = double(pivot->lc), d_a = pivot_allow;
  }
}

size_t FinalTimes::next(int64_t* out, int64_t* input, size_t max) {
  const LocationModel& loc = loc_;
  const uint32_t n = static_cast<uint32_t>(loc.input.size());
  const uint32_t end = static_cast<uint32_t>(std::min<size_t>(n, size_t(event_) + max));
  InputTimes::Reader in = input_; // a local copy: its state stays in registers
  uint32_t i = event_;
  size_t k = 0;
  // Between events with links the controller runs again, as the forward replay ran it; the
  // pre-synchronization is decided once per run of events, not per event.
  auto controller = [&](uint32_t stop, auto presync) {
    int64_t prev_lc = prev_lc_, prev_t = prev_t_;
    for (; i < stop; ++i, ++k) {
      const int64_t raw = in.advance();
      const int64_t t = presync(raw);
      prev_lc = s_.step(prev_lc, prev_t, t);
      prev_t = t;
      input[k] = raw;
      out[k] = sweep_.final_time(i, prev_lc);
    }
    prev_lc_ = prev_lc, prev_t_ = prev_t;
  };
  while (i < end) {
    const uint32_t next_link = link_ < loc.links.size() ? loc.links[link_].event : n;
    if (i == next_link || i == 0) { // an event with links, or the first: no predecessor
      const int64_t raw = in.advance();
      const int64_t t = loc.presync.apply(raw);
      prev_lc_ = i == next_link ? loc.link_lc[link_] : t, prev_t_ = t;
      while (link_ < loc.links.size() && loc.links[link_].event == i)
        ++link_;
      input[k] = raw;
      out[k++] = sweep_.final_time(i, prev_lc_);
      ++i;
      continue;
    }
    const uint32_t stop = std::min(end, next_link);
    if (loc.presync.active)
      controller(stop, [&](int64_t t) { return loc.presync.apply(t); });
    else
      controller(stop, [](int64_t t) { return t; });
  }
  event_ = i;
  input_ = in;
  return k;
}

} // namespace htrace::correct
