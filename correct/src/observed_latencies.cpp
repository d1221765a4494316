// The minimum latencies the trace itself shows, which cap the l_min of the clock condition: an
// l_min above a latency that really happened invents violations and moves events that were right.
//
// What an input latency (receive minus send, pre-synchronized) proves depends on the clocks:
//  - processes of one verified clock domain (HTRACE::CLOCK::DOMAIN) and the threads of one process
//    read one clock: their latencies are exact, so the smallest one bounds l_min;
//  - across clocks each latency is off by the clock offset o between the two, but o cancels in a
//    round trip: min(A->B) + min(B->A) = true min(A->B) + true min(B->A) for a constant o, and
//    l_min (a bound of every latency) is at most their mean. That assumes o constant between the
//    two minima (the pre-synchronization removed the drift) and is the only upper estimate a trace
//    of unsynchronized clocks gives.
// Collectives count like messages: a member's end that depends on another member's begin (the
// collective's pattern says which) is that begin's message, and the latest such begin its tightest
// one. Within one clock the gap bounds l_min; across clocks the offset cancels in the round trip of
// two processes' gaps, as for point-to-point messages, and one direction may be a message, the
// other a collective. One rank per node with collectives only thus still shows its latencies.
#include "replay_state.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace htrace::correct {
namespace {

constexpr int64_t kNone = kNoTime;

int64_t smaller(int64_t a, int64_t b) {
  if (a == kNone) return b;
  if (b == kNone) return a;
  return std::min(a, b);
}

// A negative latency bounds nothing: it is a violation whatever l_min is (clocks that are not as
// exact as declared, or a recording-order artefact), and the CLC repairs it.
int64_t bound_from(int64_t latency) {
  return latency >= 0 ? latency : kNone;
}

class LatencyObserver {
public:
  explicit LatencyObserver(ReplayState& s) : s_(s), m_(s.model), defs_(*s.ctx.defs) {}

  ObservedLatencies run() {
    enter_local_inputs();
    observe_receives();
    return combine();
  }

private:
  // Each contribution's input time where this rank's receivers see it (round 0 brought the other
  // ranks'). The forward replay enters the same values again (the aggregates keep maxima).
  void enter_local_inputs() {
    for (const LocationModel& loc : m_.locations) {
      InputTimes::Reader in(loc.input, 0);
      for (const Link& link : loc.links) {
        if (link.role() != LinkRole::Contribute) continue;
        Channel& ch = s_.channel(link.channel());
        in.skip_to(link.event);
        const int64_t t = loc.presync.apply(in.time());
        if (ch.type == ChannelType::P2P)
          ch.input = t;
        else if (ch.slot == UINT32_MAX)
          continue;
        else if (ch.type == ChannelType::Local)
          s_.local_values(ch).original.add(t, loc.location);
        else
          s_.collective(ch).add_input(s_.member(loc.process, ch), t);
      }
    }
  }

  void observe_receives() {
    for (const LocationModel& loc : m_.locations) {
      InputTimes::Reader in(loc.input, 0);
      for (const Link& link : loc.links) {
        if (link.role() != LinkRole::Receive) continue;
        const Channel& ch = s_.channel(link.channel());
        in.skip_to(link.event);
        const int64_t t = loc.presync.apply(in.time());
        switch (ch.type) {
        case ChannelType::P2P:
          if (ch.input != kNone)
            note_pair(m_.channels.src(ch), loc.process, t - ch.input, kByMessage);
          break;
        case ChannelType::Local: {
          const int64_t v = s_.local_values(ch).original.excluding(loc.location);
          if (v != kNone) omp_ = smaller(omp_, bound_from(t - v));
          break;
        }
        case ChannelType::Collective: {
          const CollectiveInstance& c = s_.collective(ch);
          const auto d = c.latest_input_dependency(s_.member(loc.process, ch));
          if (d.begin != kNone) note_pair(d.process, loc.process, t - d.begin, kByCollective);
          break;
        }
        }
      }
    }
  }

  void note_pair(uint32_t src, uint32_t dst, int64_t latency, int64_t by) {
    const uint64_t key = uint64_t(src) << 32 | dst;
    if (key != last_key_)
      last_ = &pairs_.try_emplace(key, PairMinimum{latency, by}).first->second, last_key_ = key;
    if (latency < last_->latency) *last_ = {latency, by};
  }

  // The pairs of every correction rank (a receive is observed where its receiver is), then the
  // classes' minima, the same on every rank.
  ObservedLatencies combine() {
    std::vector<int64_t> mine;
    mine.reserve(pairs_.size() * 3);
    for (const auto& [key, m] : pairs_)
      mine.insert(mine.end(), {static_cast<int64_t>(key), m.latency, m.by});
    const std::vector<int64_t> all = s_.ranks.allgather(mine.data(), mine.size());
    std::unordered_map<uint64_t, PairMinimum> pairs;
    for (size_t i = 0; i + 2 < all.size(); i += 3)
      pairs.emplace(static_cast<uint64_t>(all[i]), PairMinimum{all[i + 1], all[i + 2]});
    ObservedLatencies o;
    for (const auto& [key, m] : pairs) {
      const auto src = static_cast<uint32_t>(key >> 32), dst = static_cast<uint32_t>(key);
      ObservedLatency bound;
      if (defs_.share_clock(src, dst)) {
        bound = {bound_from(m.latency), m.by};
      } else if (src < dst) { // each round trip once
        auto back = pairs.find(uint64_t(dst) << 32 | src);
        if (back != pairs.end())
          bound = {bound_from((m.latency + back->second.latency) / 2),
                   kRoundTrip | m.by | back->second.by};
      }
      ObservedLatency& cls = s_.ctx.latencies.same_node(src, dst) ? o.intra : o.inter;
      if (bound.ns != kNone && (cls.ns == kNone || bound.ns < cls.ns)) cls = bound;
    }
    int64_t omp = omp_ == kNone ? std::numeric_limits<int64_t>::max() : omp_;
    s_.ranks.allreduce_min(&omp, 1); // kNoTime, the smallest int64, travels as the largest
    if (omp != std::numeric_limits<int64_t>::max()) o.omp = {omp, kByOpenMp};
    return o;
  }

  ReplayState& s_;
  LocalModel& m_;
  const Definitions& defs_;
  // The smallest gap seen from src's event to dst's (a receive or a collective's end), and what
  // kind of relation showed it (kByMessage, kByCollective).
  struct PairMinimum {
    int64_t latency, by;
  };
  std::unordered_map<uint64_t, PairMinimum> pairs_; // src<<32|dst
  uint64_t last_key_ = UINT64_MAX;                  // messages come in runs of one pair
  PairMinimum* last_ = nullptr;
  int64_t omp_ = kNone;
};

} // namespace

std::string describe(const ObservedLatency& observed) {
  if (observed.ns == kNone) return "";
  std::string kinds;
  if (observed.by & kByMessage) kinds = "messages";
  if (observed.by & kByCollective) kinds += kinds.empty() ? "collectives" : " and collectives";
  if (observed.by & kByOpenMp) kinds = "OpenMP relations";
  return observed.by & kRoundTrip ? "round trips of " + kinds + " across clocks"
                                  : kinds + " within one clock";
}

void observe_latencies(ReplayState& state) {
  const ObservedLatencies o = LatencyObserver(state).run();
  state.stats.observed = o;
  const Options& opt = *state.ctx.options;
  Latencies& l = state.ctx.latencies;
  const auto lower = [](int64_t& lmin, const ObservedLatency& observed) {
    if (observed.ns != kNone) lmin = std::max<int64_t>(0, std::min(lmin, observed.ns));
  };
  if (opt.lmin_intra_ns < 0) lower(l.intra, o.intra);
  if (opt.lmin_inter_ns < 0) lower(l.inter, o.inter);
  if (opt.lmin_omp_ns < 0) lower(l.omp, o.omp);
}

} // namespace htrace::correct
