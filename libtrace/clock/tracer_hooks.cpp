// The tracer's clock lifecycle: base clock selection and synchronization in MPI_Init, residual
// offsets measured right after the sync and again in MPI_Finalize, everything stored in the
// archive so that readers know the time base and htrace-correct can interpolate remaining drift.
#include "clock/accuracy.h"
#include "clock/base_clock.h"
#include "clock/mpi_transport.h"
#include "clock/sync.h"
#include "common/host_name.h"
#include "common/log.h"
#include "htrace/archive_properties.h"
#include "record/recorder.h"

#include <algorithm>
#include <memory>
#include <string>

namespace htrace::clock {
namespace {

constexpr int kResidualPingpongs = 10;

// What MPI_Finalize needs from MPI_Init. Set once in sync_at_init (single-threaded MPI_Init).
struct TracerClockState {
  bool active = false;
  GlobalTimeMap map;
  // Kept from MPI_Init to MPI_Finalize so the node communicator is created only once.
  std::unique_ptr<MpiTransport> world;
};
TracerClockState& state() {
  static TracerClockState s;
  return s;
}

/// Whether this rank runs on rank 0's host (by host name: cheaper than a node communicator).
bool on_root_host(Transport& world) {
  const std::int64_t mine = host_name_hash();
  std::int64_t root = mine;
  world.broadcast(&root, sizeof root, 0);
  return root == mine;
}

void store_residual(Transport& world, const GlobalClock& global, bool init, SyncStats stats) {
  const std::int64_t started = now();
  // Which ranks share rank 0's node decides whether a round trip counts as intra or inter.
  const bool on_root_node = on_root_host(world);
  std::vector<int> ranks;
  for (int r = 1; r < world.size(); ++r)
    ranks.push_back(r);
  OffsetMeasurement mine;
  const auto all = measure_offsets_to_root(world, global, ranks, kResidualPingpongs, &mine);
  if (world.rank() != 0) {
    std::int64_t& slot = on_root_node ? stats.min_rtt_intra_ns : stats.min_rtt_inter_ns;
    slot = std::min(slot, mine.min_rtt_ns);
  }
  record::set_process_property(init ? HTRACE_LPROP_INIT_TIME : HTRACE_LPROP_FINAL_TIME,
                               mine.time_ns);
  record::set_process_property(init ? HTRACE_LPROP_INIT_OFFSET : HTRACE_LPROP_FINAL_OFFSET,
                               mine.offset_ns);
  record::set_process_property(
      init ? HTRACE_LPROP_INIT_UNCERTAINTY : HTRACE_LPROP_FINAL_UNCERTAINTY, mine.uncertainty_ns);
  const std::int64_t intra = world.allreduce_min(stats.min_rtt_intra_ns);
  const std::int64_t inter = world.allreduce_min(stats.min_rtt_inter_ns);
  if (init) {
    if (intra != SyncStats::kUnknown)
      record::set_archive_property(HTRACE_PROP_MIN_LATENCY_INTRA, std::to_string(intra / 2));
    if (inter != SyncStats::kUnknown)
      record::set_archive_property(HTRACE_PROP_MIN_LATENCY_INTER, std::to_string(inter / 2));
  }
  if (world.rank() == 0) {
    std::int64_t worst = 0;
    for (const auto& m : all)
      worst = std::max<std::int64_t>(worst, std::llabs(m.offset_ns));
    log::debug(
        "clock: %s residual offsets: max |offset| %lld ns over %d ranks, measured in %.3f ms",
        init ? "initial" : "final", static_cast<long long>(worst), world.size(),
        static_cast<double>(now() - started) * 1e-6);
  }
}

} // namespace

bool sync_at_init(MPI_Comm comm, const Options& options) {
  TracerClockState& s = state();
  s.world = std::make_unique<MpiTransport>(comm);
  MpiTransport& world = *s.world;
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
  const SyncRun run = synchronize_on(world, parsed.config, [] { return now(); });
  s.map = run.clock.to_time_map(now());
  s.active = true;
  record::set_global_time_map(s.map);
  const bool synced = parsed.config.algorithm != Algorithm::None;
  record::set_archive_property(HTRACE_PROP_TIMEBASE, synced ? "global" : "local");
  record::set_archive_property(HTRACE_PROP_SYNC_CONFIG, canonical);
  record::set_archive_property(HTRACE_PROP_BASE_CLOCK, base_clock_name(current_base_clock()));
  const GlobalClock global([] { return now(); },
                           {LinearModel{s.map.origin_ns, s.map.offset_at_origin_ns, s.map.slope}});
  store_residual(world, global, true, run.stats);
  if (world.rank() == 0)
    log::debug("clock: %s synchronization took %.3f ms (base clock %s)",
               algorithm_name(parsed.config.algorithm), static_cast<double>(run.duration_ns) * 1e-6,
               base_clock_name(current_base_clock()));
  return true;
}

void measure_at_finalize(MPI_Comm comm, const Options& options) {
  TracerClockState& s = state();
  // The transport (and its node communicator) goes before MPI_Finalize in any case.
  std::unique_ptr<MpiTransport> kept = std::move(s.world);
  if (!s.active || !options.sync_finalize) return;
  MpiTransport fresh(comm);
  MpiTransport& world = kept && kept->comm() == comm ? *kept : fresh;
  const GlobalClock global([] { return now(); },
                           {LinearModel{s.map.origin_ns, s.map.offset_at_origin_ns, s.map.slope}});
  store_residual(world, global, false, SyncStats{});
}

} // namespace htrace::clock
