#include "correct/replay.h"

#include "correct/clock_knots.h"
#include "htrace/archive_properties.h"
#include "replay_state.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace htrace::correct {

CollectiveMember ReplayState::member(uint32_t process, const Channel& ch) const {
  const CommInfo& ci = ctx.defs->comms.at(static_cast<OTF2_CommRef>(model.channels.keys[ch.key].a));
  auto it = ci.process_rank.find(process);
  return {it == ci.process_rank.end() ? UINT32_MAX : it->second, process,
          ctx.defs->processes[process].node};
}

const std::vector<int>& ReplayState::remote_owners(uint64_t comm) {
  auto [it, inserted] = remote_owners_.try_emplace(comm);
  if (inserted) {
    std::set<int> others;
    for (uint32_t p : ctx.defs->comms.at(static_cast<OTF2_CommRef>(comm)).rank_process)
      if (p != UINT32_MAX && owner(p) != rank) others.insert(owner(p));
    it->second.assign(others.begin(), others.end());
  }
  return it->second;
}

void ReplayState::post(int to, const Channel& ch, uint32_t process, int64_t value, int64_t input) {
  if (ch.type == ChannelType::P2P) {
    exchange.post(to, *model.channels.stream_list[ch.key], ch.seq, value);
  } else {
    const ChannelKey key = model.channels.key(ch);
    exchange.post(to, CollectiveValue{static_cast<uint32_t>(key.a), process, key.b, value, input});
  }
}

void ReplayState::reserve_p2p_values(bool to_receivers) {
  std::vector<size_t> values(static_cast<size_t>(size)), runs(values.size());
  for (const P2PStream* st : model.channels.stream_list) {
    const auto src = static_cast<uint32_t>(st->src), dst = static_cast<uint32_t>(st->dst);
    if (to_receivers && local(src) && !local(dst))
      values[static_cast<size_t>(owner(dst))] += st->counts.sends,
          runs[static_cast<size_t>(owner(dst))]++;
    else if (!to_receivers && local(dst) && !local(src))
      values[static_cast<size_t>(owner(src))] += st->counts.receives,
          runs[static_cast<size_t>(owner(src))]++;
  }
  for (int r = 0; r < size; ++r)
    exchange.reserve(r, values[static_cast<size_t>(r)], runs[static_cast<size_t>(r)]);
}

int64_t ReplayState::receive_bound(const LocationModel& loc, const Channel& ch, bool input) const {
  switch (ch.type) {
  case ChannelType::P2P: {
    const int64_t v = input ? ch.input : ch.value;
    return v == kNoTime ? kNoTime : v + ctx.latencies.mpi(model.channels.src(ch), loc.process);
  }
  case ChannelType::Local: {
    const LocalValues& lv = local_values(ch);
    const int64_t v = (input ? lv.original : lv.corrected).excluding(loc.location);
    return v == kNoTime ? kNoTime : v + ctx.latencies.omp;
  }
  case ChannelType::Collective:
    return collective(ch).end_bound(member(loc.process, ch), ctx.latencies, input);
  }
  return kNoTime;
}

namespace {

// The residual offsets htrace measured at MPI_Init, during the run and at MPI_Finalize,
// interpolated linearly between consecutive measurements (with a knot where the clock's rate
// changed between two of them: clock_knots.h). They apply in both time bases: with
// `local` they are the whole clock offsets, with `global` what the synchronization left, drift
// included. Every measurement is used unless the user set a limit on its uncertainty: the
// midpoint of a SKaMPI bound is far better than the bound's half-width, and the CLC repairs what
// an offset leaves wrong. htrace-correct's own output ("corrected") already has them applied.
std::vector<ClockMeasurement> usable_measurements(const LocationInfo& li, const Options& o) {
  const auto usable = [&](int64_t unc) {
    return o.presync_max_uncertainty_ns < 0 || unc <= o.presync_max_uncertainty_ns;
  };
  std::vector<ClockMeasurement> all;
  if (li.has_init && usable(li.init_uncertainty))
    all.push_back({li.init_time, li.init_offset, li.init_uncertainty});
  if (!o.presync_ends_only)
    for (const ClockMeasurement& m : li.during)
      if (usable(m.uncertainty)) all.push_back(m);
  if (li.has_final && usable(li.final_uncertainty))
    all.push_back({li.final_time, li.final_offset, li.final_uncertainty});
  // In time order, one per instant (a damaged or foreign archive may hold anything).
  std::stable_sort(
      all.begin(), all.end(),
      [](const ClockMeasurement& a, const ClockMeasurement& b) { return a.time < b.time; });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const ClockMeasurement& a, const ClockMeasurement& b) {
                          return a.time == b.time;
                        }),
            all.end());
  return all;
}

Presync presync_of(const std::vector<ClockMeasurement>& m) {
  Presync p;
  p.t0 = m.front().time;
  p.o0 = m.front().offset;
  if (m.size() == 2)
    p.slope = double(m.back().offset - m.front().offset) / double(m.back().time - m.front().time);
  if (m.size() > 2) p.knots = knots_of(m);
  p.expected_error = expected_clock_error(m);
  // Between two measurements the interpolation errs by at most the larger of their errors.
  for (const ClockMeasurement& c : m)
    p.error = std::max(p.error, c.uncertainty);
  p.measured = true;
  p.measurements = int(m.size());
  p.active =
      std::any_of(m.begin(), m.end(), [](const ClockMeasurement& c) { return c.offset != 0; });
  return p;
}

uint64_t set_up_presync(const ReplayContext& ctx, LocalModel& model) {
  auto tb = ctx.defs->archive_properties.find(HTRACE_PROP_TIMEBASE);
  const bool measured_base =
      tb != ctx.defs->archive_properties.end() && (tb->second == "local" || tb->second == "global");
  if (!ctx.options->presync || !measured_base) return 0;
  // The processes of one clock domain read one clock: they take the same model, the first one's
  // (htrace records the same values for all of them; this keeps their latencies exact anyway).
  std::unordered_map<int64_t, uint32_t> domain_location;
  for (const ProcessInfo& p : ctx.defs->processes)
    if (p.clock_domain != LocationInfo::kNoClockDomain && !p.locations.empty())
      domain_location.try_emplace(p.clock_domain, p.locations.front());
  uint64_t presynced = 0;
  for (LocationModel& loc : model.locations) {
    auto d = domain_location.find(ctx.defs->processes[loc.process].clock_domain);
    const LocationInfo& li =
        ctx.defs->locations[d != domain_location.end() ? d->second : loc.location];
    const std::vector<ClockMeasurement> m = usable_measurements(li, *ctx.options);
    if (m.empty()) continue;
    loc.presync = presync_of(m);
    if (loc.presync.active) presynced++;
  }
  return presynced;
}

} // namespace

Replay::Replay(const ReplayContext& ctx, LocalModel& model)
    : model_(model), state_(std::make_unique<ReplayState>(ctx, model, stats_)) {}

Replay::~Replay() = default;

void Replay::run() {
  stats_.presynced_locations = set_up_presync(state_->ctx, model_);
  forward_replay(*state_);
  backward_limits(*state_);
}

const Latencies& Replay::latencies() const {
  return state_->ctx.latencies;
}

void Replay::begin(size_t index) {
  if (index == current_)
    stats_.violations_after = violations_before_location_;
  else
    violations_before_location_ = stats_.violations_after, current_ = index;
  times_.reset(); // one location's ramps at a time
  times_ = std::make_unique<FinalTimes>(*state_, model_.locations[index]);
}

size_t Replay::next(int64_t* out, int64_t* input, size_t max) {
  return times_ ? times_->next(out, input, max) : 0;
}

} // namespace htrace::correct
