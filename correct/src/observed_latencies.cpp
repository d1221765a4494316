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
// Collectives count where all their members share one clock: an end before every other member's
// begin plus l_min would be a violation, so their smallest such gap bounds l_min too.
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
  explicit LatencyObserver(ReplayState& s) : s_(s), m_(s.model), defs_(*s.ctx.defs) {
    zero_.defs = &defs_;
    find_single_clock_nodes();
  }

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
          if (ch.input != kNone) note_pair(m_.channels.src(ch), loc.process, t - ch.input);
          break;
        case ChannelType::Local: {
          const int64_t v = s_.local_values(ch).original.excluding(loc.location);
          if (v != kNone) omp_ = smaller(omp_, bound_from(t - v));
          break;
        }
        case ChannelType::Collective:
          observe_collective_end(loc, ch, t);
          break;
        }
      }
    }
  }

  // Only collectives whose members all share the receiver's clock: their nodes' begins are the only
  // ones, and the node is one clock domain.
  void observe_collective_end(const LocationModel& loc, const Channel& ch, int64_t t) {
    if (!single_clock_node_[defs_.processes[loc.process].node]) return;
    const CollectiveInstance& c = s_.collective(ch);
    const uint64_t node = defs_.processes[loc.process].node;
    if (c.input_by_node.excluding(node) != kNone) return;
    const int64_t bound = c.end_bound(s_.member(loc.process, ch), zero_, /*input=*/true);
    if (bound != kNone) collective_ = smaller(collective_, bound_from(t - bound));
  }

  void note_pair(uint32_t src, uint32_t dst, int64_t latency) {
    const uint64_t key = uint64_t(src) << 32 | dst;
    if (key != last_key_) last_ = &pairs_.try_emplace(key, latency).first->second, last_key_ = key;
    *last_ = std::min(*last_, latency);
  }

  void find_single_clock_nodes() {
    std::unordered_map<uint64_t, int64_t> domain; // node -> its one domain, or kNoClockDomain
    for (const ProcessInfo& p : defs_.processes) {
      auto [it, inserted] = domain.try_emplace(p.node, p.clock_domain);
      if (!inserted && it->second != p.clock_domain) it->second = LocationInfo::kNoClockDomain;
    }
    for (const auto& [node, d] : domain)
      single_clock_node_[node] = d != LocationInfo::kNoClockDomain;
  }

  // The pairs of every correction rank (a receive is observed where its receiver is), then the
  // classes' minima, the same on every rank.
  ObservedLatencies combine() {
    std::vector<int64_t> mine;
    mine.reserve(pairs_.size() * 2);
    for (const auto& [key, latency] : pairs_)
      mine.push_back(static_cast<int64_t>(key)), mine.push_back(latency);
    const std::vector<int64_t> all = s_.ranks.allgather(mine.data(), mine.size());
    std::unordered_map<uint64_t, int64_t> pairs;
    for (size_t i = 0; i + 1 < all.size(); i += 2)
      pairs.emplace(static_cast<uint64_t>(all[i]), all[i + 1]);
    ObservedLatencies o;
    for (const auto& [key, latency] : pairs) {
      const auto src = static_cast<uint32_t>(key >> 32), dst = static_cast<uint32_t>(key);
      int64_t bound = kNone;
      if (defs_.share_clock(src, dst)) {
        bound = bound_from(latency);
      } else if (src < dst) { // each round trip once
        auto back = pairs.find(uint64_t(dst) << 32 | src);
        if (back != pairs.end()) bound = bound_from((latency + back->second) / 2);
      }
      int64_t& cls = s_.ctx.latencies.same_node(src, dst) ? o.intra : o.inter;
      cls = smaller(cls, bound);
    }
    int64_t minima[2] = {collective_, omp_};
    allreduce_min(minima);
    o.intra = smaller(o.intra, minima[0]);
    o.omp = minima[1];
    return o;
  }

  void allreduce_min(int64_t (&v)[2]) const {
    // kNoTime is the smallest int64: "none" travels as the largest instead.
    constexpr int64_t kNoneSent = std::numeric_limits<int64_t>::max();
    for (int64_t& x : v)
      x = x == kNone ? kNoneSent : x;
    s_.ranks.allreduce_min(v, 2);
    for (int64_t& x : v)
      x = x == kNoneSent ? kNone : x;
  }

  ReplayState& s_;
  LocalModel& m_;
  const Definitions& defs_;
  Latencies zero_; // the bounds' gaps without any latency
  std::unordered_map<uint64_t, bool> single_clock_node_;
  std::unordered_map<uint64_t, int64_t> pairs_; // src<<32|dst -> smallest latency seen
  uint64_t last_key_ = UINT64_MAX;              // messages come in runs of one pair
  int64_t* last_ = nullptr;
  int64_t collective_ = kNone, omp_ = kNone;
};

} // namespace

void observe_latencies(ReplayState& state) {
  const ObservedLatencies o = LatencyObserver(state).run();
  state.stats.observed = o;
  const Options& opt = *state.ctx.options;
  Latencies& l = state.ctx.latencies;
  const auto lower = [](int64_t& lmin, int64_t observed) {
    if (observed != kNone) lmin = std::max<int64_t>(0, std::min(lmin, observed));
  };
  if (opt.lmin_intra_ns < 0) lower(l.intra, o.intra);
  if (opt.lmin_inter_ns < 0) lower(l.inter, o.inter);
  if (opt.lmin_omp_ns < 0) lower(l.omp, o.omp);
}

} // namespace htrace::correct
