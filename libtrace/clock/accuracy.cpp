#include "clock/accuracy.h"

#include "clock/base_clock.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace htrace::clock {

SyncRun synchronize_on(Transport& t, const SyncConfig& config, TimeSource base, SyncContext ctx) {
  if (ctx.self < 0) ctx.self = t.rank();
  if (ctx.stats.domain < 0) ctx.stats.domain = ctx.self;
  t.barrier();
  const auto start = std::chrono::steady_clock::now();
  GlobalClock input(std::move(base));
  GlobalClock result = run_sync(config, t, input, ctx);
  const auto end = std::chrono::steady_clock::now();
  return {std::move(result), ctx.stats,
          std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()};
}

std::vector<OffsetMeasurement> measure_offsets_to_root(Transport& t, const GlobalClock& clock,
                                                       const std::vector<int>& ranks, int pingpongs,
                                                       OffsetMeasurement* mine) {
  std::vector<OffsetMeasurement> all;
  if (t.rank() == 0) {
    for (int r : ranks) {
      if (r == 0) continue;
      serve_offset(t, r, clock);
      OffsetMeasurement m;
      std::int64_t w[4];
      t.recv(r, w, sizeof w);
      m.time_ns = w[0];
      m.offset_ns = w[1];
      m.uncertainty_ns = w[2];
      m.min_rtt_ns = w[3];
      all.push_back(m);
    }
    if (mine) *mine = OffsetMeasurement{clock.now(), 0, 0, 0};
    return all;
  }
  if (std::find(ranks.begin(), ranks.end(), t.rank()) == ranks.end()) return all;
  const OffsetMeasurement m = measure_offset_client(t, 0, clock, OffsetMethod::Skampi, pingpongs);
  const std::int64_t w[4] = {m.time_ns, m.offset_ns, m.uncertainty_ns, m.min_rtt_ns};
  t.send(0, w, sizeof w);
  if (mine) *mine = m;
  return all;
}

} // namespace htrace::clock

namespace htrace::clock {

bool setup_base_clock(Transport& world, const std::string& name, std::string& error) {
  BaseClockKind kind;
  if (!parse_base_clock(name, kind, error)) return false;
  bool usable = true;
  if (kind == BaseClockKind::Tsc) usable = tsc_is_invariant(error);
  // Every rank must agree, or some ranks would trace on another clock.
  if (world.allreduce_min(usable ? 1 : 0) == 0) {
    if (usable) error = "the TSC is not invariant on another node";
    return false;
  }
  TscCalibration cal;
  if (kind == BaseClockKind::Tsc) {
    auto node = world.split_node();
    if (node->rank() == 0) cal = calibrate_tsc(10'000'000);
    node->broadcast(&cal, sizeof cal, 0);
  }
  install_base_clock(kind, cal);
  return true;
}

AccuracyCheck check_accuracy(Transport& t, const SyncConfig& config, TimeSource base,
                             const std::vector<int>& ranks, std::int64_t wait_ns, int pingpongs) {
  AccuracyCheck c;
  c.run = synchronize_on(t, config, base);
  c.max_duration_ns = t.allreduce_max(c.run.duration_ns);
  c.after_sync = measure_offsets_to_root(t, c.run.clock, ranks, pingpongs, &c.mine_after_sync);
  c.local_after_sync = c.run.clock.base_now();
  if (wait_ns > 0) {
    t.barrier();
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
    t.barrier();
  }
  c.after_wait = measure_offsets_to_root(t, c.run.clock, ranks, pingpongs, &c.mine_after_wait);
  c.local_after_wait = c.run.clock.base_now();
  return c;
}

} // namespace htrace::clock
