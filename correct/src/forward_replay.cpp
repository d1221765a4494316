// Forward amortization (controller plus receive rule), see replay.h for the parallel scheme.
#include "htrace/archive_properties.h"
#include "replay_state.h"

#include <algorithm>
#include <set>
#include <string>

namespace htrace::correct {
namespace {

class ForwardReplay {
public:
  explicit ForwardReplay(ReplayState& s) : s_(s), m_(s.model) {}

  void run() {
    if (s_.size > 1) {
      // Round 0: every cross-rank contribution's input time. The forward replay never moves an
      // event earlier, so it is a lower bound of the final value and a good first guess: the
      // first pass then only sends values that moved.
      publish_input_times();
      cross_rank_values_ = deliver_all(/*input=*/true);
      s_.stats.rounds = 1;
    }
    observe_latencies(s_);
    first_pass();
    check_matched();
    if (s_.size > 1) {
      build_receivers();
      while (deliver_all(/*input=*/false) > 0) {
        // Without a cycle every round extends a chain of cross-rank messages, and no chain is
        // longer than their number; a cycle (which the first pass cannot see across ranks)
        // would raise its values forever.
        if (++s_.stats.rounds > cross_rank_values_ + 2)
          fail_together(s_.ranks,
                        "cyclic relations across correction ranks (e.g. each of two processes "
                        "receives the other's message before sending its own)");
        reevaluate_dirty(); // posts the values that changed
      }
    }
    for (const LocationModel& loc : m_.locations)
      s_.stats.jumps += loc.jumps.size();
  }

private:
  // --- first pass: every owned location, in dependency order inside this rank ----------------
  // Forward times are kept only for events with links (LocationModel::link_lc); the others follow
  // from the controller and are produced again when the output is written.
  struct Cursor {
    uint32_t event = 0, link = 0;
    int64_t prev_lc = 0, prev_t = 0; // forward and pre-synchronized input time of event - 1
    InputTimes::Reader input;        // at `event`
  };

  bool ready(const Channel& ch) const { return ch.arrived >= ch.expected; }

  // Advances one location as far as its local messages allow; returns true on progress.
  bool advance(LocationModel& loc, Cursor& cur) {
    const uint32_t n = static_cast<uint32_t>(loc.input.size());
    const uint32_t start = cur.event;
    while (cur.event < n) {
      const uint32_t next_link = cur.link < loc.links.size() ? loc.links[cur.link].event : n;
      run_controller(loc, cur, next_link); // events without logical messages
      if (next_link == n) break;
      for (uint32_t l = cur.link; l < loc.links.size() && loc.links[l].event == next_link &&
                                  loc.links[l].role() == LinkRole::Receive;
           ++l)
        if (!ready(s_.channel(loc.links[l].channel()))) return cur.event > start;
      const int64_t t = loc.presync.apply(cur.input.time());
      const int64_t unbound = next_link == 0 ? t : s_.step(cur.prev_lc, cur.prev_t, t);
      const uint32_t first_link = cur.link;
      cur.link = evaluate(loc, next_link, cur.link, t, unbound, /*first=*/true);
      cur.prev_lc = loc.link_lc[first_link], cur.prev_t = t;
      cur.event = next_link + 1;
      cur.input.next();
    }
    return cur.event > start;
  }

  // The controller alone from the cursor's event up to event `to` (exclusive).
  void run_controller(const LocationModel& loc, Cursor& cur, uint32_t to) {
    if (cur.event >= to) return;
    const Presync& ps = loc.presync;
    int64_t prev_t = cur.prev_t, prev_lc = cur.prev_lc;
    InputTimes::Reader in = cur.input;
    uint32_t i = cur.event;
    if (i == 0) prev_t = prev_lc = ps.apply(in.advance()), ++i;
    for (; i < to; ++i) {
      const int64_t t = ps.apply(in.advance());
      prev_lc = s_.step(prev_lc, prev_t, t);
      prev_t = t;
    }
    cur.event = to, cur.prev_lc = prev_lc, cur.prev_t = prev_t, cur.input = in;
  }

  // Evaluates event i (pre-synchronized input time t, forward time `unbound` before its receives'
  // bounds; its links start at index l): receive bounds, then its contributions. Returns the index
  // of the first link of a later event. The first evaluation also counts the input's violations
  // (all contributions' input times are known by then).
  uint32_t evaluate(LocationModel& loc, uint32_t i, uint32_t l, int64_t t, int64_t unbound,
                    bool first) {
    const uint32_t first_link = l;
    int64_t v = unbound, input_bound = kNoTime;
    int kind = -1;
    for (; l < loc.links.size() && loc.links[l].event == i &&
           loc.links[l].role() == LinkRole::Receive;
         ++l) {
      Channel& ch = s_.channel(loc.links[l].channel());
      v = std::max(v, s_.receive_bound(loc, ch));
      if (!first) continue;
      if (s_.size > 1) note_receiver(ch, loc, l);
      if (ch.type == ChannelType::P2P && !ch.has_contribution) note_never_sent(loc, i);
      const int64_t b = s_.receive_bound(loc, ch, /*input=*/true);
      if (b == kNoTime) continue;
      s_.stats.messages[static_cast<int>(ch.kind)]++;
      if (b > input_bound) input_bound = b, kind = static_cast<int>(ch.kind);
    }
    if (kind >= 0 && t < input_bound) s_.stats.violations_before[kind]++;
    // (the first pass writes link_lc the first time)
    const bool changed = first || v != loc.link_lc[first_link];
    set_jump(loc, i, v - unbound, first);
    for (uint32_t k = first_link; k < l; ++k)
      loc.link_lc[k] = v;
    for (; l < loc.links.size() && loc.links[l].event == i; ++l) {
      loc.link_lc[l] = v;
      if (changed) contribute(loc, loc.links[l], v, t, first);
    }
    return l;
  }

  // The first jump at or after event i.
  static std::vector<Jump>::iterator find_jump(LocationModel& loc, uint32_t i) {
    return std::lower_bound(loc.jumps.begin(), loc.jumps.end(), i,
                            [](const Jump& j, uint32_t e) { return j.event < e; });
  }
  // The forward move the receive rule made at event i (0: none).
  static int64_t jump_at(LocationModel& loc, uint32_t i) {
    auto it = find_jump(loc, i);
    return it != loc.jumps.end() && it->event == i ? it->amount : 0;
  }

  // Jumps (forward moves made by the receive rule) are what the backward replay amortizes. The
  // first pass appends them in event order; later rounds correct single entries.
  void set_jump(LocationModel& loc, uint32_t i, int64_t amount, bool first) {
    if (first) {
      if (amount > 0) loc.jumps.push_back({i, amount});
      return;
    }
    auto it = find_jump(loc, i);
    const bool present = it != loc.jumps.end() && it->event == i;
    if (amount > 0 && present)
      it->amount = amount;
    else if (amount > 0)
      loc.jumps.insert(it, {i, amount});
    else if (present)
      loc.jumps.erase(it);
  }

  void note_never_sent(const LocationModel& loc, uint32_t event) {
    if (!never_sent_.empty()) return;
    const LocationInfo& li = s_.ctx.defs->locations[loc.location];
    never_sent_ = "location " + std::to_string(li.id) + " (" + li.name + "): event " +
                  std::to_string(event) +
                  " receives a p2p message that is never sent (unmatched messages, e.g. from a "
                  "truncated run)";
  }

  void first_pass() {
    link_base_.assign(1, 0);
    std::string too_many;
    for (LocationModel& loc : m_.locations) {
      loc.link_lc.resize(loc.links.size());
      if (link_base_.back() + loc.links.size() >= UINT32_MAX)
        too_many = "more than 2^32 logical-message links on one correction rank";
      link_base_.push_back(link_base_.back() + static_cast<uint32_t>(loc.links.size()));
    }
    check_together(s_.ranks, too_many, 0, ErrorKind::Internal);
    std::vector<Cursor> cursors(m_.locations.size());
    for (size_t i = 0; i < m_.locations.size(); ++i)
      cursors[i].input = InputTimes::Reader(m_.locations[i].input, 0);
    for (bool again = true; again;) {
      again = false;
      for (size_t i = 0; i < m_.locations.size(); ++i)
        if (advance(m_.locations[i], cursors[i])) again = true;
    }
    check_together(s_.ranks, stuck_message(cursors));
  }

  // Names the first location that waits forever (a cycle, or an OpenMP relation whose other
  // side is missing).
  std::string stuck_message(const std::vector<Cursor>& cursors) const {
    for (size_t i = 0; i < m_.locations.size(); ++i) {
      const LocationModel& loc = m_.locations[i];
      if (cursors[i].event >= loc.input.size()) continue;
      const Channel& ch = s_.channel(loc.links[cursors[i].link].channel());
      const LocationInfo& li = s_.ctx.defs->locations[loc.location];
      return "location " + std::to_string(li.id) + " (" + li.name + "): event " +
             std::to_string(cursors[i].event) + " waits for a " +
             kMessageKindNames[static_cast<int>(ch.kind)] +
             " message that is never sent (unmatched or cyclic relations)";
    }
    return "";
  }

  // --- contributions ---------------------------------------------------------------------------
  // Calls f(rank) for every other correction rank that receives the channel's contributions.
  template <class F> void for_remote_receivers(const Channel& ch, F&& f) {
    if (s_.size == 1) return;
    if (ch.type == ChannelType::P2P) {
      const uint32_t dst = m_.channels.dst(ch);
      if (!s_.local(dst)) f(s_.owner(dst));
    } else if (ch.type == ChannelType::Collective) {
      for (int r : s_.remote_owners(s_.key(ch).a))
        f(r);
    }
  }

  // Sends a contribution's forward value v (input time t) of `process` to the other correction
  // ranks that receive it, if any.
  void post_remote(const Channel& ch, uint32_t process, int64_t v, int64_t t) {
    for_remote_receivers(ch, [&](int r) { s_.post(r, ch, process, v, t); });
  }

  void publish_input_times() {
    s_.reserve_p2p_values(/*to_receivers=*/true);
    for (const LocationModel& loc : m_.locations) {
      InputTimes::Reader in(loc.input, 0);
      for (const Link& link : loc.links) {
        if (link.role() != LinkRole::Contribute) continue;
        const Channel& ch = s_.channel(link.channel());
        for_remote_receivers(ch, [&](int r) {
          in.skip_to(link.event);
          const int64_t t = loc.presync.apply(in.time());
          s_.post(r, ch, loc.process, t, t);
        });
      }
    }
  }

  // Passes the forward time v (input time t) of a contributing event on: to the channel here, and
  // to other correction ranks when it differs from what they have (the input time, or an earlier
  // value).
  void contribute(const LocationModel& loc, const Link& link, int64_t v, int64_t t, bool first) {
    Channel& ch = s_.channel(link.channel());
    if (first) ch.arrived++, ch.has_contribution = true;
    if (ch.type == ChannelType::P2P) {
      ch.value = std::max(ch.value, v), ch.input = t;
    } else if (ch.type == ChannelType::Local) {
      LocalValues& lv = s_.local_values(ch);
      lv.corrected.add(v, loc.location);
      lv.original.add(t, loc.location);
    } else {
      CollectiveInstance& c = s_.collective(ch);
      if (first) c.begins_seen++;
      c.add_begin(s_.member(loc.process, ch), v, t);
    }
    if (v != t) post_remote(ch, loc.process, v, t);
    if (!first) mark_receivers(link.channel());
  }

  // --- later rounds ------------------------------------------------------------------------------
  // A raised contribution re-evaluates the receives it now binds. Receives are numbered across
  // this rank's locations (link_base_[location index] + link index) and noted by the first pass: a
  // p2p channel's single receive in the channel itself (Channel::slot), the receives of the
  // other channels (collectives, OpenMP: few) in a list indexed by channel key afterwards.
  void note_receiver(Channel& ch, const LocationModel& loc, uint32_t link) {
    const auto li = static_cast<size_t>(&loc - m_.locations.data());
    const uint32_t number = link_base_[li] + link;
    if (ch.type == ChannelType::P2P)
      ch.slot = number;
    else
      noted_receivers_.emplace_back(ch.key, number);
  }

  // The noted receives of non-p2p channels by channel key (CSR).
  void build_receivers() {
    const size_t n = m_.channels.keys.size();
    recv_begin_.assign(n + 1, 0);
    for (const auto& [key, number] : noted_receivers_)
      recv_begin_[key + 1]++;
    for (size_t i = 0; i < n; ++i)
      recv_begin_[i + 1] += recv_begin_[i];
    receivers_.resize(recv_begin_[n]);
    std::vector<uint32_t> fill(recv_begin_.begin(), recv_begin_.end() - 1);
    for (const auto& [key, number] : noted_receivers_)
      receivers_[fill[key]++] = number;
    noted_receivers_ = {};
  }

  void mark_receivers(uint32_t channel) {
    const Channel& ch = s_.channel(channel);
    if (ch.type == ChannelType::P2P) {
      if (ch.slot != UINT32_MAX) mark_receiver(ch, ch.slot);
      return;
    }
    if (ch.key + 1 >= recv_begin_.size()) return;
    for (uint32_t k = recv_begin_[ch.key]; k < recv_begin_[ch.key + 1]; ++k)
      mark_receiver(ch, receivers_[k]);
  }

  // Marks receive `number` for re-evaluation if the channel's value now binds it more.
  void mark_receiver(const Channel& ch, uint32_t number) {
    const auto li = static_cast<uint32_t>(
        std::upper_bound(link_base_.begin(), link_base_.end(), number) - link_base_.begin() - 1);
    const LocationModel& loc = m_.locations[li];
    const uint32_t link = number - link_base_[li];
    if (s_.receive_bound(loc, ch) > loc.link_lc[link]) dirty_.insert({li, loc.links[link].event});
  }

  // Delivers what the other ranks posted: the contributions' input times (`input`, round 0) or
  // their raised forward values. Returns the number of values moved on all ranks together (0:
  // nothing was posted anywhere).
  uint64_t deliver_all(bool input) {
    const uint64_t moved = s_.exchange.run();
    // A rank that fails here (its channel table full) must not leave the others waiting in the
    // next exchange.
    std::string error;
    ErrorKind kind = ErrorKind::Input;
    std::vector<uint32_t> raised; // collective channels given values
    try {
      s_.exchange.for_each_received(
          [&](const P2PRun& run) {
            P2PStream& stream = m_.channels.stream(run.src, run.dst, run.comm_tag);
            for (size_t i = 0; i < run.count; ++i) {
              const uint32_t id = m_.channels.p2p(stream, run.first + i);
              Channel& ch = s_.channel(id);
              ch.value = std::max(ch.value, run.values[i]);
              if (input)
                ch.input = run.values[i], ch.has_contribution = true;
              else // (round 0 comes before the first pass: nothing to re-evaluate yet)
                mark_receivers(id);
            }
          },
          [&](const CollectiveValue& v) {
            const uint32_t id = m_.channels.get({ChannelType::Collective, v.comm, v.sequence, 0, 0},
                                                MessageKind::Collective);
            Channel& ch = s_.channel(id);
            if (ch.slot == UINT32_MAX) return; // no member here: reported by check_matched
            CollectiveInstance& c = s_.collective(ch);
            if (input) c.begins_seen++;
            c.add_begin(s_.member(v.process, ch), v.value, v.input);
            if (!input) raised.push_back(id);
          });
      // A collective's receives are marked once its values are all in, not once per value: an
      // instance brings a value per remote member and has a receive per local one. Bounds only
      // grow, so the marks are those of marking after every value.
      std::sort(raised.begin(), raised.end());
      raised.erase(std::unique(raised.begin(), raised.end()), raised.end());
      for (const uint32_t id : raised)
        mark_receivers(id);
    } catch (const std::exception& e) {
      error = e.what();
      kind = error_kind(e, ErrorKind::Input);
    }
    check_together(s_.ranks, error, 0, kind);
    return moved;
  }

  // Re-evaluates marked locations from their earliest marked event until their times stop
  // changing; raised contributions mark further receivers (here) or are posted (elsewhere).
  void reevaluate_dirty() {
    while (!dirty_.empty()) {
      const auto [li, from] = *dirty_.begin();
      dirty_.erase(dirty_.begin());
      LocationModel& loc = m_.locations[li];
      const Presync& ps = loc.presync;
      uint32_t l = static_cast<uint32_t>(
          std::lower_bound(loc.links.begin(), loc.links.end(), from,
                           [](const Link& a, uint32_t e) { return a.event < e; }) -
          loc.links.begin());
      const uint32_t n = static_cast<uint32_t>(loc.input.size());
      // Only the receive bounds of `from` moved, not the time its predecessors give it.
      int64_t unbound = loc.link_lc[l] - jump_at(loc, from);
      InputTimes::Reader in(loc.input, from);
      for (uint32_t i = from;;) {
        const int64_t t = ps.apply(in.time());
        const int64_t old = loc.link_lc[l];
        const uint32_t first_link = l;
        l = evaluate(loc, i, l, t, unbound, /*first=*/false);
        s_.stats.reevaluated++;
        if (loc.link_lc[first_link] == old) break; // later events follow unchanged
        const uint32_t next = l < loc.links.size() ? loc.links[l].event : n;
        s_.stats.reevaluated += next - i - 1;
        if (next == n) break; // no later event with links: no kept time depends on these
        // The controller up to the next event with links, whose time it changes.
        in.next();
        Cursor cur{i + 1, 0, loc.link_lc[first_link], t, in};
        run_controller(loc, cur, next);
        in = cur.input;
        i = next;
        dirty_.erase({li, i});
        unbound = s_.step(cur.prev_lc, cur.prev_t, ps.apply(in.time()));
      }
    }
  }

  // --- checks and statistics ------------------------------------------------------------------
  // After every value has arrived: each p2p receive has its send, each send its receive, each
  // collective all its members.
  void check_matched() {
    std::string msg = never_sent_; // a missing send explains more than what waits behind it
    // An archive rebuilt by htrace-salvage ends where each rank was cut off: a message to a rank
    // that died before receiving it, a receive whose sender lost its unwritten buffer (SIGKILL),
    // or a collective not every member reached, is what happened, not damage. Such a relation
    // has only one side and constrains nothing. The same holds where HTRACE_BUDGET stopped
    // recording on some ranks: what each rank recorded is a prefix of what it did.
    const auto& properties = s_.ctx.defs->archive_properties;
    if (properties.count(HTRACE_PROP_RUN_END) != 0 ||
        properties.count(HTRACE_PROP_RUN_BUDGET_RANKS) != 0) {
      check_together(s_.ranks, "", 0);
      return;
    }
    // The receives of a stream take its sequence numbers from 0 on, all on the rank that owns the
    // destination: a message numbered beyond them is never received.
    for (const P2PStream* st : m_.channels.stream_list) {
      if (!msg.empty()) break;
      if (!s_.local(static_cast<uint32_t>(st->dst))) continue;
      for (size_t seq = st->counts.receives; seq < st->channels.size(); ++seq) {
        const uint32_t id = st->channels[seq];
        if (id == UINT32_MAX || !s_.channel(id).has_contribution) continue;
        msg = "a point-to-point message from process " + std::to_string(st->src) + " to process " +
              std::to_string(st->dst) + " (sequence " + std::to_string(seq) +
              ") is never received (unmatched messages, e.g. from a truncated run)";
        break;
      }
    }
    for (size_t i = 0; i < m_.collectives.size() && msg.empty(); ++i) {
      const CollectiveInstance& c = m_.collectives[i];
      if (!s_.channel(c.channel).has_receiver || c.begins_seen >= c.members) continue;
      const ChannelKey key = s_.key(s_.channel(c.channel));
      msg = "collective number " + std::to_string(key.b) + " on communicator " +
            std::to_string(key.a) + " was entered by " + std::to_string(c.begins_seen) + " of " +
            std::to_string(c.members) +
            " members (unmatched collectives, e.g. from a truncated run)";
    }
    check_together(s_.ranks, msg, !never_sent_.empty() ? 0 : 1);
  }

  ReplayState& s_;
  LocalModel& m_;
  std::vector<uint32_t> link_base_; // the number of each location's first link (see note_receiver)
  std::vector<std::pair<uint32_t, uint32_t>> noted_receivers_; // (channel key, receive number)
  std::vector<uint32_t> recv_begin_, receivers_;
  std::set<std::pair<uint32_t, uint32_t>> dirty_; // (location index, event)
  std::string never_sent_;                        // the first p2p receive without a send
  uint64_t cross_rank_values_ = 0; // contributions received on another correction rank
};

} // namespace

void forward_replay(ReplayState& state) {
  ForwardReplay(state).run();
}

} // namespace htrace::correct
