#include "correct/replay.h"

#include "htrace/archive_properties.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace htrace::correct {
namespace {

// One logical-message payload between correction processes (fixed size, sent as bytes).
struct Msg {
  ChannelKey key;
  int64_t value, original;
  uint32_t op, root, rank, pad;
};
enum MsgUse : uint32_t { kForward = 0, kBackward = 1, kUpperBound = 2 };

struct CollAcc {
  std::vector<int64_t> value, original, end;
  uint32_t arrived = 0, ends = 0, op = 0, root = 0;
};

bool one_to_n(uint32_t op) {
  return op == OTF2_COLLECTIVE_OP_BCAST || op == OTF2_COLLECTIVE_OP_SCATTER ||
         op == OTF2_COLLECTIVE_OP_SCATTERV;
}
bool n_to_one(uint32_t op) {
  return op == OTF2_COLLECTIVE_OP_GATHER || op == OTF2_COLLECTIVE_OP_GATHERV ||
         op == OTF2_COLLECTIVE_OP_REDUCE;
}
bool prefix(uint32_t op) {
  return op == OTF2_COLLECTIVE_OP_SCAN || op == OTF2_COLLECTIVE_OP_EXSCAN;
}
// Does the end of rank r depend on the begin of rank c?
bool depends(uint32_t op, uint32_t root, uint32_t r, uint32_t c) {
  if (r == c) return false;
  if (one_to_n(op)) return c == root;
  if (n_to_one(op)) return r == root;
  if (prefix(op)) return c < r;
  return true; // barrier, all-to-all kinds, communicator creation/destruction
}

class Replayer {
public:
  Replayer(const ReplayContext& c, LocalModel& m) : ctx_(c), m_(m), out_(c.size) {}

  ReplayStats run() {
    presync();
    forward();
    backward();
    return stats_;
  }

private:
  // --- pre-synchronization -------------------------------------------------------------------
  // Linear interpolation between the INIT and FINAL offsets when both are trustworthy, a constant
  // offset when only one is, nothing otherwise.
  void presync() {
    auto tb = ctx_.defs->archive_properties.find(HTRACE_PROP_TIMEBASE);
    bool local_timebase = tb != ctx_.defs->archive_properties.end() && tb->second == "local";
    const int64_t max_unc = ctx_.options->presync_max_uncertainty_ns;
    for (LocationModel& loc : m_.locations) {
      loc.lc = loc.input;
      const LocationInfo& li = ctx_.defs->locations[loc.location];
      if (!ctx_.options->presync || !local_timebase) continue;
      bool init = li.has_init && li.init_uncertainty <= max_unc;
      bool fin = li.has_final && li.final_uncertainty <= max_unc;
      if (!init && !fin) continue;
      int64_t t0 = init ? li.init_time : li.final_time,
              o0 = init ? li.init_offset : li.final_offset;
      double slope = 0;
      if (init && fin && li.final_time != li.init_time)
        slope = double(li.final_offset - li.init_offset) / double(li.final_time - li.init_time);
      if (o0 == 0 && slope == 0) continue;
      stats_.presynced_locations++;
      for (int64_t& t : loc.lc)
        t -= o0 + static_cast<int64_t>(std::llround(slope * double(t - t0)));
    }
  }

  // --- forward replay -------------------------------------------------------------------------
  struct Cursor {
    uint32_t event = 0, link = 0;
    int64_t prev_t = 0, prev_lc = 0;
  };

  int64_t receive_lmin(const LocationModel& loc, const Channel& ch) const {
    if (ch.key.type == ChannelType::P2P)
      return ctx_.latencies.mpi(static_cast<uint32_t>(ch.key.a), loc.process);
    if (ch.key.type == ChannelType::Local) return ctx_.latencies.omp;
    return 0; // CollIn: the coordinator added the latency
  }
  bool ready(const Channel& ch) const {
    if (ch.expected < 0) return true;
    if (ch.key.type == ChannelType::Local) return ch.arrived >= ch.expected;
    return ch.arrived >= 1;
  }

  // Advances one location as far as its messages allow; returns true on progress.
  bool advance(LocationModel& loc, Cursor& cur) {
    const double gamma = ctx_.options->gamma;
    const int64_t delta = ctx_.options->delta_ns;
    bool progressed = false;
    const uint32_t n = static_cast<uint32_t>(loc.lc.size());
    while (cur.event < n) {
      uint32_t i = cur.event;
      uint32_t l = cur.link;
      int64_t bound = kNoTime, bound_orig = kNoTime;
      int kind = -1;
      for (; l < loc.links.size() && loc.links[l].event == i &&
             loc.links[l].role == LinkRole::Receive;
           ++l) {
        Channel& ch = m_.channels.channels[loc.links[l].channel];
        ch.has_receiver = true;
        if (!ready(ch)) return progressed;
        if (ch.expected < 0) continue;
        int64_t v = ch.corrected.excluding(loc.location), o = ch.original.excluding(loc.location);
        int64_t lmin = receive_lmin(loc, ch);
        if (v != kNoTime && v + lmin > bound) bound = v + lmin, kind = static_cast<int>(ch.kind);
        if (o != kNoTime) bound_orig = std::max(bound_orig, o + lmin);
        if (o != kNoTime && kind < 0) kind = static_cast<int>(ch.kind);
        stats_.messages[static_cast<int>(ch.kind)]++;
      }
      int64_t t = loc.lc[i];
      int64_t v = t;
      if (i > 0) {
        v = std::max(v, cur.prev_lc + delta);
        v = std::max(v, cur.prev_lc + static_cast<int64_t>(gamma * double(t - cur.prev_t)));
      }
      if (kind >= 0 && t < bound_orig) stats_.violations_before[kind]++;
      if (bound != kNoTime && v < bound) {
        loc.jumps.push_back({i, bound - v});
        stats_.jumps++;
        v = bound;
      }
      loc.lc[i] = v;
      cur.prev_t = t;
      cur.prev_lc = v;
      for (; l < loc.links.size() && loc.links[l].event == i; ++l)
        contribute(loc, loc.links[l], v, t);
      cur.link = l;
      cur.event = i + 1;
      progressed = true;
    }
    return progressed;
  }

  int owner_of(uint32_t process) const { return ctx_.owner[process]; }
  const CommInfo& comm(uint64_t id) const {
    return ctx_.defs->comms.at(static_cast<OTF2_CommRef>(id));
  }

  void contribute(const LocationModel& loc, const Link& link, int64_t v, int64_t t) {
    Channel& ch = m_.channels.channels[link.channel];
    switch (ch.key.type) {
    case ChannelType::Local:
      ch.corrected.add(v, loc.location);
      ch.original.add(t, loc.location);
      ch.arrived++;
      break;
    case ChannelType::P2P:
      if (owner_of(static_cast<uint32_t>(ch.key.b)) == ctx_.rank) { // local hand-over: same channel
        ch.corrected.add(v, UINT32_MAX);
        ch.original.add(t, UINT32_MAX);
        ch.arrived++;
      } else {
        out_[owner_of(static_cast<uint32_t>(ch.key.b))].push_back(
            {ch.key, v, t, 0, 0, 0, kForward});
      }
      break;
    case ChannelType::CollOut:
      route(owner_of(comm(ch.key.a).rank_process[0]),
            {{ChannelType::CollOut, ch.key.a, ch.key.b, 0, 0},
             v,
             t,
             ch.op,
             ch.root,
             ch.rank,
             kForward});
      break;
    case ChannelType::CollIn:
      break;
    }
  }

  void route(int rank, const Msg& msg) {
    if (rank == ctx_.rank)
      deliver(msg);
    else
      out_[rank].push_back(msg);
  }

  void deliver(const Msg& msg) {
    if (msg.key.type == ChannelType::CollOut && msg.pad != kUpperBound) return coordinate(msg);
    ChannelKey key = msg.key;
    Channel& ch = m_.channels.channels[m_.channels.get(
        key, key.type == ChannelType::P2P ? MessageKind::P2P : MessageKind::Collective)];
    if (msg.pad != kForward) {
      ch.ub_neg.add(-msg.value, UINT32_MAX);
      return;
    }
    ch.corrected.add(msg.value, UINT32_MAX);
    ch.original.add(msg.original, UINT32_MAX);
    ch.arrived++;
  }

  // The coordinator of a collective instance collects every member's begin (forward) or end
  // (backward) and returns each member's bound.
  void coordinate(const Msg& msg) {
    const CommInfo& ci = comm(msg.key.a);
    const uint32_t n = static_cast<uint32_t>(ci.rank_process.size());
    CollAcc& acc = coll_[{msg.key.a, msg.key.b}];
    if (acc.value.empty())
      acc.value.assign(n, kNoTime), acc.original.assign(n, kNoTime), acc.end.assign(n, kNoTime);
    if (msg.pad == kBackward) {
      acc.end[msg.rank] = msg.value;
      if (++acc.ends < n) return;
      for (uint32_t c = 0; c < n; ++c) {
        int64_t ub = std::numeric_limits<int64_t>::max();
        for (uint32_t r = 0; r < n; ++r)
          if (depends(acc.op, acc.root, r, c))
            ub = std::min(ub,
                          acc.end[r] - ctx_.latencies.mpi(ci.rank_process[c], ci.rank_process[r]));
        route(owner_of(ci.rank_process[c]),
              {{ChannelType::CollOut, msg.key.a, msg.key.b, c, 0}, ub, 0, 0, 0, c, kUpperBound});
      }
      coll_.erase({msg.key.a, msg.key.b});
      return;
    }
    acc.value[msg.rank] = msg.value;
    acc.original[msg.rank] = msg.original;
    acc.op = msg.op, acc.root = msg.root;
    if (++acc.arrived < n) return;
    for (uint32_t r = 0; r < n; ++r) {
      int64_t bound = kNoTime, bound_orig = kNoTime;
      for (uint32_t c = 0; c < n; ++c) {
        if (!depends(acc.op, acc.root, r, c)) continue;
        int64_t lmin = ctx_.latencies.mpi(ci.rank_process[c], ci.rank_process[r]);
        bound = std::max(bound, acc.value[c] + lmin);
        bound_orig = std::max(bound_orig, acc.original[c] + lmin);
      }
      route(owner_of(ci.rank_process[r]), {{ChannelType::CollIn, msg.key.a, msg.key.b, r, 0},
                                           bound,
                                           bound_orig,
                                           0,
                                           0,
                                           r,
                                           kForward});
    }
    acc.arrived = 0;
  }

  // One bulk-synchronous exchange of the buffered messages. The counts exchange also carries
  // `flags` (bit 0 done, bit 1 progressed); returns bit 0 = all ranks done, bit 2 = any rank
  // progressed or any message moved.
  int exchange(int flags = 0) {
    if (ctx_.size == 1) return 1;
    // One MPI_Alltoall carries a header (message count, flags) and up to kInline messages per
    // destination; only rounds where some rank has more use a second MPI_Alltoallv. Every rank
    // sees every rank's flags, so the decisions below are the same everywhere.
    constexpr int kInline = 4;
    struct Slot {
      int32_t count, flags;
      Msg msgs[kInline];
    };
    const int n = ctx_.size;
    // Delivering may make this rank a coordinator that answers: those go out next round.
    std::vector<std::vector<Msg>> out(static_cast<size_t>(n));
    out.swap(out_);
    for (int r = 0; r < n; ++r) {
      if (!out[r].empty()) flags |= 2; // pending messages count as progress
      if (out[r].size() > kInline) flags |= 8;
    }
    std::vector<Slot> send(static_cast<size_t>(n)), recv(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      send[r].count = static_cast<int32_t>(out[r].size());
      send[r].flags = flags;
      std::copy_n(out[r].begin(), std::min<size_t>(kInline, out[r].size()), send[r].msgs);
    }
    MPI_Alltoall(send.data(), sizeof(Slot), MPI_BYTE, recv.data(), sizeof(Slot), MPI_BYTE,
                 ctx_.comm);
    int all_done = 1, any = 0, overflow = 0;
    for (int r = 0; r < n; ++r) {
      if (!(recv[r].flags & 1)) all_done = 0;
      if (recv[r].flags & 2) any = 1;
      if (recv[r].flags & 8) overflow = 1;
      for (int i = 0; i < std::min(kInline, recv[r].count); ++i)
        deliver(recv[r].msgs[i]);
    }
    if (overflow) {
      std::vector<int> sc(n), sd(n), rc(n), rd(n);
      std::vector<Msg> sendbuf;
      int total = 0;
      for (int r = 0; r < n; ++r) {
        sd[r] = static_cast<int>(sendbuf.size() * sizeof(Msg));
        if (out[r].size() > kInline)
          sendbuf.insert(sendbuf.end(), out[r].begin() + kInline, out[r].end());
        sc[r] = static_cast<int>(sendbuf.size() * sizeof(Msg)) - sd[r];
        rc[r] = static_cast<int>(std::max(0, recv[r].count - kInline) * sizeof(Msg));
        rd[r] = total, total += rc[r];
      }
      std::vector<Msg> recvbuf(static_cast<size_t>(total) / sizeof(Msg));
      MPI_Alltoallv(sendbuf.data(), sc.data(), sd.data(), MPI_BYTE, recvbuf.data(), rc.data(),
                    rd.data(), MPI_BYTE, ctx_.comm);
      for (const Msg& msg : recvbuf)
        deliver(msg);
    }
    return all_done | (any ? 4 : 0);
  }

  void forward() {
    std::vector<Cursor> cursors(m_.locations.size());
    auto run_local = [&] {
      bool progress = false, again = true;
      while (again) {
        again = false;
        for (size_t i = 0; i < m_.locations.size(); ++i)
          if (advance(m_.locations[i], cursors[i])) again = progress = true;
      }
      return progress;
    };
    auto all_done = [&] {
      for (size_t i = 0; i < m_.locations.size(); ++i)
        if (cursors[i].event < m_.locations[i].lc.size()) return false;
      return true;
    };
    if (ctx_.size == 1) {
      run_local();
      if (!all_done()) fail(stuck_message(cursors));
    } else {
      // Bulk-synchronous rounds: advance every cursor as far as possible, then one exchange whose
      // counts also carry each rank's done/progress flags. A round without progress anywhere
      // means a message is never sent (unmatched, or a cycle).
      for (;;) {
        bool progress = run_local();
        int flags = (all_done() ? 1 : 0) | (progress ? 2 : 0);
        int seen = exchange(flags);
        stats_.rounds++;
        if (seen & 4) continue; // someone progressed or messages moved
        if (seen & 1) break;    // every rank done
        std::string msg = stuck_message(cursors);
        fail(msg, msg.find(" p2p ") != std::string::npos ? 0 : 1);
      }
    }
    check_unreceived();
  }

  // Names the first waiting location, preferring a point-to-point wait (the usual root cause:
  // other locations then wait in collectives for the blocked one).
  std::string stuck_message(const std::vector<Cursor>& cursors) const {
    std::string first;
    for (size_t i = 0; i < m_.locations.size(); ++i) {
      const LocationModel& loc = m_.locations[i];
      if (cursors[i].event >= loc.lc.size()) continue;
      const Channel& ch = m_.channels.channels[loc.links[cursors[i].link].channel];
      const LocationInfo& li = ctx_.defs->locations[loc.location];
      std::string msg =
          "location " + std::to_string(li.id) + " (" + li.name + "): event " +
          std::to_string(cursors[i].event) + " waits for a " +
          kMessageKindNames[static_cast<int>(ch.kind)] +
          " message that is never sent (unmatched messages, e.g. from a truncated run)";
      if (ch.kind == MessageKind::P2P) return msg;
      if (first.empty()) first = msg;
    }
    return first;
  }

  void check_unreceived() {
    std::string msg;
    for (const Channel& ch : m_.channels.channels)
      if (ch.key.type == ChannelType::P2P && ch.arrived > 0 && !ch.has_receiver && msg.empty())
        msg = "a point-to-point message from process " + std::to_string(ch.key.a) + " to process " +
              std::to_string(ch.key.b) + " (sequence " + std::to_string(ch.key.d) +
              ") is never received (unmatched messages, e.g. from a truncated run)";
    int bad = msg.empty() ? 0 : 1, any = bad;
    if (ctx_.size > 1) MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, ctx_.comm);
    if (any) fail(msg);
  }

  // Every rank throws the message of the lowest rank that has one.
  // priority 0 beats 1: a p2p wait explains more than the collectives blocked behind it.
  [[noreturn]] void fail(std::string msg, int priority = 0) {
    if (ctx_.size > 1) {
      int mine = msg.empty() ? 2 * ctx_.size : priority * ctx_.size + ctx_.rank, first = mine;
      MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx_.comm);
      first %= ctx_.size;
      int len = static_cast<int>(msg.size());
      MPI_Bcast(&len, 1, MPI_INT, first, ctx_.comm);
      msg.resize(static_cast<size_t>(len));
      MPI_Bcast(msg.data(), len, MPI_CHAR, first, ctx_.comm);
    }
    throw std::runtime_error(msg);
  }

  // --- backward replay ------------------------------------------------------------------------
  void backward() {
    // Receivers tell their senders how far they may move: ub(S) = LC(R) - l_min.
    for (LocationModel& loc : m_.locations)
      for (const Link& link : loc.links) {
        if (link.role != LinkRole::Receive) continue;
        Channel& ch = m_.channels.channels[link.channel];
        int64_t v = loc.lc[link.event];
        if (ch.key.type == ChannelType::Local) {
          ch.ub_neg.add(-(v - ctx_.latencies.omp), loc.location);
        } else if (ch.key.type == ChannelType::P2P) {
          int64_t ub = v - ctx_.latencies.mpi(static_cast<uint32_t>(ch.key.a), loc.process);
          int owner = owner_of(static_cast<uint32_t>(ch.key.a));
          if (owner == ctx_.rank)
            ch.ub_neg.add(-ub, UINT32_MAX); // the sender's channel is this very one
          else
            out_[owner].push_back({ch.key, ub, 0, 0, 0, 0, kBackward});
        } else if (ch.key.type == ChannelType::CollIn) {
          route(owner_of(comm(ch.key.a).rank_process[0]),
                {{ChannelType::CollOut, ch.key.a, ch.key.b, 0, 0},
                 v,
                 0,
                 0,
                 0,
                 static_cast<uint32_t>(ch.key.c),
                 kBackward});
        }
      }
    exchange();
    exchange(); // coordinators' answers
    for (LocationModel& loc : m_.locations)
      amortize(loc);
  }

  int64_t upper_bound(const LocationModel& loc, const Link& link) const {
    const Channel& ch = m_.channels.channels[link.channel];
    int64_t neg =
        ch.ub_neg.excluding(ch.key.type == ChannelType::Local ? loc.location : UINT32_MAX - 1);
    return neg == kNoTime ? std::numeric_limits<int64_t>::max() : -neg;
  }

  // Spreads each forward jump over the time before its receive (piecewise-linear ramp bounded by
  // the senders' upper bounds), then counts relations the result still violates.
  void amortize(LocationModel& loc) {
    if (loc.jumps.empty() && loc.links.empty()) return;
    // Upper bounds of this location's sending events, ascending by event (sparse).
    std::vector<std::pair<uint32_t, int64_t>> ub;
    for (const Link& link : loc.links) {
      if (link.role != LinkRole::Contribute) continue;
      int64_t b = upper_bound(loc, link);
      if (!ub.empty() && ub.back().first == link.event)
        ub.back().second = std::min(ub.back().second, b);
      else
        ub.emplace_back(link.event, b);
    }
    if (!loc.jumps.empty()) {
      std::vector<int64_t> shifted = loc.lc;
      for (const Jump& j : loc.jumps)
        ramp(loc, j, ub, shifted);
      loc.lc.swap(shifted);
    }
    for (const Link& link : loc.links)
      if (link.role == LinkRole::Contribute && loc.lc[link.event] > upper_bound(loc, link))
        stats_.violations_after[static_cast<int>(m_.channels.channels[link.channel].kind)]++;
  }

  void ramp(const LocationModel& loc, const Jump& j,
            const std::vector<std::pair<uint32_t, int64_t>>& ub,
            std::vector<int64_t>& shifted) const {
    const double m = ctx_.options->slope;
    uint32_t anchor = j.event;
    double x_a = double(loc.lc[anchor] - j.amount), d_a = double(j.amount);
    while (d_a > 0 && anchor > 0) {
      double left = std::max(double(loc.lc[0]), x_a - d_a / m);
      // The send that needs the steepest ramp to stay below its bound, if any would exceed it.
      uint32_t pivot = UINT32_MAX;
      double pivot_slope = 0, pivot_allow = 0;
      auto it = std::lower_bound(ub.begin(), ub.end(),
                                 std::make_pair(anchor, std::numeric_limits<int64_t>::min()));
      while (it != ub.begin()) {
        --it;
        double x = double(loc.lc[it->first]);
        if (x < left) break;
        if (it->second == std::numeric_limits<int64_t>::max()) continue;
        double allow = std::max(0.0, double(it->second - loc.lc[it->first]));
        if (d_a * (x - left) / (x_a - left) <= allow) continue;
        double slope = (d_a - allow) / (x_a - x);
        if (pivot == UINT32_MAX || slope > pivot_slope)
          pivot = it->first, pivot_slope = slope, pivot_allow = allow;
      }
      uint32_t stop = pivot == UINT32_MAX ? 0 : pivot;
      for (uint32_t i = anchor; i-- > stop && double(loc.lc[i]) >= left;) {
        double s = pivot == UINT32_MAX
                       ? d_a * (double(loc.lc[i]) - left) / (x_a - left)
                       : pivot_allow + pivot_slope * (double(loc.lc[i]) - double(loc.lc[pivot]));
        shifted[i] = std::max(shifted[i], loc.lc[i] + static_cast<int64_t>(std::floor(s)));
      }
      if (pivot == UINT32_MAX) break;
      anchor = pivot, x_a = double(loc.lc[pivot]), d_a = pivot_allow;
    }
  }

  const ReplayContext& ctx_;
  LocalModel& m_;
  std::vector<std::vector<Msg>> out_;
  std::map<std::pair<uint64_t, uint64_t>, CollAcc> coll_;
  ReplayStats stats_;
};

} // namespace

const char* const kMessageKindNames[kMessageKinds] = {"p2p", "collective", "OpenMP"};

ReplayStats run_replay(const ReplayContext& ctx, LocalModel& model) {
  return Replayer(ctx, model).run();
}

} // namespace htrace::correct
