#include "clock/accuracy.h"

#include <algorithm>
#include <chrono>

namespace htrace::clock {

SyncRun synchronize_on(Transport& t, const SyncConfig& config, TimeSource base, SyncContext ctx) {
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
