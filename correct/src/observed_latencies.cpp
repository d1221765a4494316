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
//    of unsynchronized clocks gives. Where the pre-synchronization is poor (a drift that changed
//    between two measurements), o varies over the run by more than a latency and the two minima,
//    taken at different times, sum to less than 0; such pairs are observed again per time window
//    (kWindowNs), in which o is nearly constant, and the smallest windowed round trip counts. An
//    l_min the trace cannot cap is dangerous: a run of round trips faster than 2 l_min is
//    stretched by the difference on every one (tens of milliseconds over a minute of ping-pong).
// Collectives count like messages: a member's end that depends on another member's begin (the
// collective's pattern says which) is that begin's message, and the latest such begin its tightest
// one. Within one clock the gap bounds l_min; across clocks the offset cancels in the round trip of
// two processes' gaps, as for point-to-point messages, and one direction may be a message, the
// other a collective. One rank per node with collectives only thus still shows its latencies.
#include "replay_state.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace htrace::correct {
namespace {

constexpr int64_t kNone = kNoTime;
// A window of the timeline short enough that an offset whose pre-synchronization is off by a
// drift of tens of ppm changes by well under a latency within it (20 ppm: 200 ns).
constexpr int64_t kWindowNs = 10'000'000;

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
  // The smallest gap seen from src's event to dst's (a receive or a collective's end), and what
  // kind of relation showed it (kByMessage, kByCollective).
  struct PairMinimum {
    int64_t latency, by;
  };

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
            note_pair(m_.channels.src(ch), loc.process, t - ch.input, kByMessage, t);
          break;
        case ChannelType::Local: {
          const int64_t v = s_.local_values(ch).original.excluding(loc.location);
          if (v != kNone) omp_ = smaller(omp_, bound_from(t - v));
          break;
        }
        case ChannelType::Collective: {
          const CollectiveInstance& c = s_.collective(ch);
          const auto d = c.latest_input_dependency(s_.member(loc.process, ch));
          if (d.begin != kNone) note_pair(d.process, loc.process, t - d.begin, kByCollective, t);
          break;
        }
        }
      }
    }
  }

  void note_pair(uint32_t src, uint32_t dst, int64_t latency, int64_t by, int64_t at) {
    if (!windowed_.empty()) {
      if (windowed_.count(pair_key(std::min(src, dst), std::max(src, dst))) == 0) return;
      auto [it, added] =
          windows_.try_emplace({pair_key(src, dst), at / kWindowNs}, PairMinimum{latency, by});
      if (!added && latency < it->second.latency) it->second = {latency, by};
      return;
    }
    const uint64_t key = pair_key(src, dst);
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
      if (defs_.share_clock(src, dst)) {
        keep(o, src, dst, {bound_from(m.latency), m.by});
      } else if (src < dst) { // each round trip once
        auto back = pairs.find(pair_key(dst, src));
        if (back == pairs.end()) continue;
        const ObservedLatency bound = round_trip(m, back->second);
        if (bound.ns == kNone) windowed_.insert(key);
        keep(o, src, dst, bound);
      }
    }
    // Every rank holds every pair, so all of them take this branch or none.
    if (!windowed_.empty()) combine_windows(o);
    int64_t omp = omp_ == kNone ? std::numeric_limits<int64_t>::max() : omp_;
    s_.ranks.allreduce_min(&omp, 1); // kNoTime, the smallest int64, travels as the largest
    if (omp != std::numeric_limits<int64_t>::max()) o.omp = {omp, kByOpenMp};
    return o;
  }

  // The pairs whose whole-run round trip came out negative (windowed_), observed again per time
  // window: each direction's smallest latency within the window.
  void combine_windows(ObservedLatencies& o) {
    pairs_.clear();
    last_key_ = UINT64_MAX;
    observe_receives();
    std::vector<int64_t> mine;
    mine.reserve(windows_.size() * 4);
    for (const auto& [at, m] : windows_)
      mine.insert(mine.end(), {static_cast<int64_t>(at.first), at.second, m.latency, m.by});
    const std::vector<int64_t> all = s_.ranks.allgather(mine.data(), mine.size());
    std::map<std::pair<uint64_t, int64_t>, PairMinimum> windows;
    for (size_t i = 0; i + 3 < all.size(); i += 4)
      windows.emplace(std::make_pair(static_cast<uint64_t>(all[i]), all[i + 1]),
                      PairMinimum{all[i + 2], all[i + 3]});
    for (const auto& [at, m] : windows) {
      const auto src = static_cast<uint32_t>(at.first >> 32), dst = static_cast<uint32_t>(at.first);
      if (src > dst) continue;
      auto back = windows.find({pair_key(dst, src), at.second});
      if (back != windows.end()) keep(o, src, dst, round_trip(m, back->second));
    }
  }

  static ObservedLatency round_trip(const PairMinimum& there, const PairMinimum& back) {
    return {bound_from((there.latency + back.latency) / 2), kRoundTrip | there.by | back.by};
  }

  void keep(ObservedLatencies& o, uint32_t src, uint32_t dst, const ObservedLatency& bound) {
    ObservedLatency& cls = s_.ctx.latencies.same_node(src, dst) ? o.intra : o.inter;
    if (bound.ns != kNone && (cls.ns == kNone || bound.ns < cls.ns)) cls = bound;
  }

  static uint64_t pair_key(uint32_t src, uint32_t dst) { return uint64_t(src) << 32 | dst; }

  ReplayState& s_;
  LocalModel& m_;
  const Definitions& defs_;
  std::unordered_map<uint64_t, PairMinimum> pairs_; // src<<32|dst
  uint64_t last_key_ = UINT64_MAX;                  // messages come in runs of one pair
  PairMinimum* last_ = nullptr;
  std::unordered_set<uint64_t> windowed_; // pairs (lower process first) observed per window
  std::map<std::pair<uint64_t, int64_t>, PairMinimum> windows_; // (src<<32|dst, window)
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
