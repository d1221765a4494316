// The tracer's clock lifecycle: base clock selection and synchronization in MPI_Init, residual
// offsets measured right after the sync and again in MPI_Finalize, everything stored in the
// archive so that readers know the time base and htrace-correct can interpolate remaining drift.
#include "mpi/clock_lifecycle.h"

#include "clock/accuracy.h"
#include "clock/base_clock.h"
#include "clock/counting_transport.h"
#include "clock/mpi_transport.h"
#include "clock/residual.h"
#include "clock/run_interval.h"
#include "clock/sync.h"
#include "common/host_name.h"
#include "common/log.h"
#include "common/sync_interval.h"
#include "htrace/archive_properties.h"
#include "record/recorder.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

namespace htrace::mpi {

using namespace clock;
namespace {

// What MPI_Finalize needs from MPI_Init. Set once in sync_at_init (single-threaded MPI_Init).
struct TracerClockState {
  bool active = false;
  GlobalTimeMap map;
  // Kept from MPI_Init to MPI_Finalize so the node communicator is created only once.
  std::unique_ptr<MpiTransport> world;
  DomainLayout layout;              ///< who measures for whom, in every measurement
  SyncStats stats;                  ///< fastest round trips so far (sync and residual measurements)
  std::int64_t run_interval_ns = 0; ///< the current one; 0: no measurement during the run
  bool adaptive = false;            ///< run_interval_ns follows the clock (all ranks agreed)
  AdaptiveInterval interval;
  std::int64_t last_measurement_ns = 0; ///< base clock at the end of the latest measurement
  int run_measurements = 0;             ///< MID_<k> stored so far
  std::int64_t run_measurement_ns = 0;  ///< time spent in them, this rank's
  std::int64_t run_started_ns = 0;      ///< base clock at the end of MPI_Init's measurement
};
TracerClockState& state() {
  static TracerClockState s;
  return s;
}

void store_min_latencies(Transport& world, SyncStats& stats) {
  const std::int64_t intra = world.allreduce_min(stats.min_rtt_intra_ns);
  const std::int64_t inter = world.allreduce_min(stats.min_rtt_inter_ns);
  if (intra != SyncStats::kUnknown)
    record::set_archive_property(HTRACE_PROP_MIN_LATENCY_INTRA, std::to_string(intra / 2));
  if (inter != SyncStats::kUnknown)
    record::set_archive_property(HTRACE_PROP_MIN_LATENCY_INTER, std::to_string(inter / 2));
}

/// Members of a domain take their leader's time map itself: each rank collapsed the same model
/// chain at its own origin, and with a slope the rounding may differ by a nanosecond; with one
/// map the domain's timestamps are equal exactly, as HTRACE::CLOCK::DOMAIN promises.
void share_domain_map(Transport& world, const DomainLayout& layout, GlobalTimeMap& map) {
  domain_broadcast(world, layout, &map, sizeof map);
}

GlobalClock clock_of(const GlobalTimeMap& map) {
  return GlobalClock([] { return now(); },
                     {LinearModel{map.origin_ns, map.offset_at_origin_ns, map.slope}});
}

Residual measure_residual(Transport& world, const GlobalTimeMap& map, const char* when,
                          const ResidualParams& params = {}) {
  TracerClockState& s = state();
  const std::int64_t started = now();
  const Residual r = measure_residuals(world, clock_of(map), s.layout, params);
  std::int64_t& slot = r.intra ? s.stats.min_rtt_intra_ns : s.stats.min_rtt_inter_ns;
  slot = std::min(slot, r.m.min_rtt_ns);
  const double elapsed_ms = static_cast<double>(now() - started) * 1e-6;
  store_min_latencies(world, s.stats);
  log::debug("clock: %s residual offset %lld ns +- %lld ns (domain %d), measured in %.3f ms over "
             "%zu domains in %d rounds",
             when, static_cast<long long>(r.m.offset_ns),
             static_cast<long long>(r.m.uncertainty_ns),
             s.layout.domain[static_cast<std::size_t>(world.rank())], elapsed_ms,
             s.layout.leaders.size(), s.layout.rounds());
  return r;
}

/// Stores one measurement under `prefix` ("HTRACE::CLOCK::INIT_" ...). TIME is the domain
/// leader's global clock at its measurement: one instant on the clock all members of the domain
/// read, so the whole tuple is identical within a domain.
void store_residual(const Residual& r, const std::string& prefix) {
  record::set_process_property(prefix + "TIME", r.m.time_ns);
  record::set_process_property(prefix + "OFFSET", r.m.offset_ns);
  record::set_process_property(prefix + "UNCERTAINTY", r.m.uncertainty_ns);
}

/// The initial residual sets the tracer's own global clock for the whole run (correct_by_residual),
/// so it takes more bursts, spread wider, than the later ones: where ranks outnumber cores a burst
/// can be delayed in one direction only, which shifts its midpoint by microseconds inside its
/// bound. 12 bursts 1 ms apart kept every node within 1 us in 12 runs of 4 nodes x 2 ranks on 2
/// cores (4 bursts 0.3 ms apart: 3 of 6 runs missed, by up to 2.4 us; 12 bursts 0.3 ms apart: 1 of
/// 8, 2.9 us). Cost: about 20 ms more per tree round (bench/clocksync).
const ResidualParams kInitialResidual{12, 32, std::chrono::microseconds(1000)};

/// The residual measurement is the last and tightest of the sync: bursts spaced to dodge time
/// slices, more exchanges than one fit point, along the same kind of tree. So the clock takes the
/// offset it measured away (a busy machine that delayed every exchange of the sync leaves
/// microseconds or more, within the sync's own wider bound), and the residual stored is 0 within
/// that measurement's bound. Members of a domain get their leader's values and shift their shared
/// map alike.
void correct_by_residual(GlobalTimeMap& map, Residual& r) {
  map.offset_at_origin_ns += r.m.offset_ns;
  r.m.offset_ns = 0;
}

ClockSample sample_of(const Residual& r) {
  return {r.m.time_ns, r.m.offset_ns, r.m.uncertainty_ns};
}

/// Every rank must take part in the same measurements during the run: a fixed interval on any
/// rank (the smallest) wins over the adaptive rule, which otherwise runs on every rank, each on
/// its own measurements (the earliest due time wins at each vote). Returns the fixed interval in
/// ns, or -1 for the adaptive rule. The options were validated when they were read.
std::int64_t agree_on_interval(Transport& world, const std::string& option) {
  std::string error;
  const SyncInterval mine = parse_sync_interval(option, error).value_or(SyncInterval{});
  constexpr std::int64_t kAdaptive = std::numeric_limits<std::int64_t>::max();
  const std::int64_t agreed = world.allreduce_min(mine.adaptive ? kAdaptive : mine.fixed_ms);
  return agreed == kAdaptive ? -1 : agreed * 1'000'000;
}

const char* verdict_name(AdaptiveInterval::Verdict v) {
  switch (v) {
  case AdaptiveInterval::Verdict::Learning:
    return "learning its line";
  case AdaptiveInterval::Verdict::OnLine:
    return "on its line";
  case AdaptiveInterval::Verdict::OffLine:
    return "off its line";
  }
  return "";
}

} // namespace

bool sync_at_init(MPI_Comm comm, const Options& options) {
  TracerClockState& s = state();
  s.world = std::make_unique<MpiTransport>(comm);
  // Everything below talks through `world`, so the count covers the whole of MPI_Init's clock
  // work (bench/scale reads it from the debug log).
  TrafficCount traffic;
  CountingTransport world(*s.world, traffic);
  std::string error;
  if (!setup_base_clock(world, options.clock, error)) {
    log::error("HTRACE_CLOCK=%s: %s", options.clock.c_str(), error.c_str());
    s.world.reset();
    return false;
  }
  const SyncConfigResult parsed = parse_sync_config(options.sync);
  if (!parsed.ok()) {
    log::error("%s", parsed.error.c_str());
    s.world.reset();
    return false;
  }
  const std::string canonical = to_string(parsed.config);
  SyncContext ctx;
  ctx.self = world.rank();
  const SyncRun run = synchronize_on(
      world, parsed.config, [] { return now(); }, ctx);
  s.map = run.clock.to_time_map(now());
  s.active = true;
  s.stats = run.stats;
  const bool synced = parsed.config.algorithm != Algorithm::None;
  if (!synced) {
    // No model anywhere, but ranks that read one base clock still form a domain.
    SyncContext check;
    check.self = world.rank();
    check.stats = s.stats;
    find_clock_domain(world, GlobalClock([] { return now(); }), SyncConfig{}, check);
    s.stats = check.stats;
  }
  s.layout = DomainLayout::gather(world, s.stats.domain, host_name_hash());
  share_domain_map(world, s.layout, s.map);
  Residual initial = measure_residual(world, s.map, "initial", kInitialResidual);
  if (synced) correct_by_residual(s.map, initial);
  store_residual(initial, HTRACE_LPROP_INIT_PREFIX);
  s.run_interval_ns = agree_on_interval(world, options.sync_interval_ms);
  s.adaptive = s.run_interval_ns < 0;
  if (s.adaptive) {
    s.interval.add(sample_of(initial));
    s.run_interval_ns = s.interval.interval_ns();
  }
  s.last_measurement_ns = s.run_started_ns = now();
  record::set_global_time_map(s.map);
  // Tests compare the residual offsets with the namespace truth, which needs the model.
  log::debug("clock: global = local - (%lld ns + %.6e * (local - %lld))",
             static_cast<long long>(s.map.offset_at_origin_ns), s.map.slope,
             static_cast<long long>(s.map.origin_ns));
  // Every location of this process carries it (the recorder copies process properties).
  record::set_process_property(HTRACE_LPROP_CLOCK_DOMAIN,
                               s.layout.domain[static_cast<std::size_t>(world.rank())]);
  record::set_archive_property(HTRACE_PROP_TIMEBASE, synced ? "global" : "local");
  record::set_archive_property(HTRACE_PROP_SYNC_CONFIG, canonical);
  record::set_archive_property(HTRACE_PROP_BASE_CLOCK, base_clock_name(current_base_clock()));
  if (world.rank() == 0)
    log::debug("clock: %s synchronization took %.3f ms (base clock %s)",
               algorithm_name(parsed.config.algorithm), static_cast<double>(run.duration_ns) * 1e-6,
               base_clock_name(current_base_clock()));
  log::debug("clock: MPI_Init traffic of this rank: %s", traffic.summary().c_str());
  return true;
}

void measure_at_finalize(MPI_Comm comm, const Options& options) {
  TracerClockState& s = state();
  // The transport (and its node communicator) goes before MPI_Finalize in any case.
  std::unique_ptr<MpiTransport> kept = std::move(s.world);
  if (!s.active || !options.sync_finalize) return;
  MpiTransport fresh(comm);
  MpiTransport& world = kept && kept->comm() == comm ? *kept : fresh;
  store_residual(measure_residual(world, s.map, "final"), HTRACE_LPROP_FINAL_PREFIX);
}

std::int64_t run_measurement_due_in_ns(std::int64_t now_ns) {
  const TracerClockState& s = state();
  if (!s.active || s.run_interval_ns <= 0 || !s.world) return -1;
  return std::max<std::int64_t>(0, s.last_measurement_ns + s.run_interval_ns - now_ns);
}

std::int64_t vote_on_run_measurement(std::int64_t proposal) {
  return state().world->allreduce_min(proposal);
}

void measure_during_run() {
  TracerClockState& s = state();
  const std::int64_t started = now();
  const Residual r = measure_residual(*s.world, s.map, "run");
  ++s.run_measurements;
  store_residual(r, HTRACE_LPROP_MID_PREFIX + std::to_string(s.run_measurements) + "_");
  s.last_measurement_ns = now();
  s.run_measurement_ns += s.last_measurement_ns - started;
  if (!s.adaptive) return;
  const AdaptiveInterval::Verdict verdict = s.interval.add(sample_of(r));
  s.run_interval_ns = s.interval.interval_ns();
  log::debug("clock: run measurement %d %s (offset %lld ns, predicted %lld +- %lld ns); next in "
             "%.1f s",
             s.run_measurements, verdict_name(verdict), static_cast<long long>(r.m.offset_ns),
             static_cast<long long>(s.interval.predicted_ns()),
             static_cast<long long>(s.interval.tolerance_ns()),
             static_cast<double>(s.run_interval_ns) * 1e-9);
}

RunMeasurementStats run_measurement_stats() {
  const TracerClockState& s = state();
  RunMeasurementStats stats;
  stats.count = s.run_measurements;
  stats.spent_ns = s.run_measurement_ns;
  stats.run_ns = s.active ? now() - s.run_started_ns : 0;
  stats.adaptive = s.adaptive;
  return stats;
}

} // namespace htrace::mpi
