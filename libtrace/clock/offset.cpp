#include "clock/offset.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace htrace::clock {
namespace {

OffsetMeasurement skampi(Transport& t, int ref, const GlobalClock& clock, int n) {
  std::int64_t lower = std::numeric_limits<std::int64_t>::min(); // bounds on reference - client
  std::int64_t upper = std::numeric_limits<std::int64_t>::max();
  std::int64_t min_rtt = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < n; ++i) {
    const std::int64_t before = clock.now();
    t.send_i64(ref, before);
    const std::int64_t remote = t.recv_hot_i64(ref);
    const std::int64_t after = clock.now();
    lower = std::max(lower, remote - after);
    upper = std::min(upper, remote - before);
    min_rtt = std::min(min_rtt, after - before);
  }
  OffsetMeasurement m;
  m.time_ns = clock.now();
  // Midpoint without overflow; negate: we report client - reference. The midpoint rounds down,
  // so the half width rounds up: the truth lies within +-uncertainty, never 1 ns outside.
  m.offset_ns = -(lower + (upper - lower) / 2);
  m.uncertainty_ns = std::max<std::int64_t>(0, (upper - lower + 1) / 2);
  m.min_rtt_ns = min_rtt;
  return m;
}

OffsetMeasurement mean_rtt(Transport& t, int ref, const GlobalClock& clock, int n) {
  std::int64_t rtt_sum = 0, min_rtt = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < n; ++i) {
    const std::int64_t before = clock.now();
    t.send_i64(ref, before);
    (void)t.recv_hot_i64(ref);
    const std::int64_t rtt = clock.now() - before;
    rtt_sum += rtt;
    min_rtt = std::min(min_rtt, rtt);
  }
  const std::int64_t half_rtt = rtt_sum / n / 2;
  std::vector<std::pair<std::int64_t, std::int64_t>> samples; // (offset, local time)
  for (int i = 0; i < n; ++i) {
    t.send_i64(ref, 0);
    const std::int64_t remote = t.recv_hot_i64(ref);
    const std::int64_t local = clock.now();
    samples.emplace_back(local - remote - half_rtt, local);
  }
  std::nth_element(samples.begin(), samples.begin() + n / 2, samples.end());
  OffsetMeasurement m;
  m.offset_ns = samples[static_cast<std::size_t>(n / 2)].first;
  m.time_ns = samples[static_cast<std::size_t>(n / 2)].second;
  m.uncertainty_ns = half_rtt;
  m.min_rtt_ns = min_rtt;
  return m;
}

} // namespace

OffsetMeasurement measure_offset_client(Transport& t, int reference, const GlobalClock& clock,
                                        OffsetMethod method, int pingpongs) {
  const int n = std::max(1, pingpongs);
  const std::int64_t exchanges = method == OffsetMethod::Skampi ? n : 2 * n;
  t.send_i64(reference, exchanges);
  (void)t.recv_i64(reference); // the go: the reference now serves this client alone
  return method == OffsetMethod::Skampi ? skampi(t, reference, clock, n)
                                        : mean_rtt(t, reference, clock, n);
}

void serve_offset(Transport& t, int client, const GlobalClock& clock) {
  const std::int64_t exchanges = t.recv_i64(client);
  t.send_i64(client, exchanges);
  for (std::int64_t i = 0; i < exchanges; ++i) {
    (void)t.recv_hot_i64(client);
    t.send_i64(client, clock.now());
  }
}

} // namespace htrace::clock
