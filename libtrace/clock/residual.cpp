#include "clock/residual.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace htrace::clock {
namespace {

int highest_bit(int i) {
  int b = 1;
  while (b * 2 <= i)
    b *= 2;
  return b;
}

/// The tightest of `bursts` SKaMPI measurements, both partners sleeping `pause` in between: one
/// burst lasts about half a millisecond, less than a scheduler time slice, so a busy core can delay
/// every exchange of a burst; after a sleep the pair is scheduled promptly again. Taking the best
/// burst (not intersecting them) keeps the bound rigorous whatever the drift between bursts.
OffsetMeasurement best_of_bursts(Transport& t, int ref, const GlobalClock& clock,
                                 const ResidualParams& p) {
  OffsetMeasurement best;
  for (int b = 0; b < std::max(1, p.bursts); ++b) {
    if (b > 0) std::this_thread::sleep_for(p.pause);
    const OffsetMeasurement m =
        measure_offset_client(t, ref, clock, OffsetMethod::Skampi, p.pingpongs);
    if (b == 0 || m.uncertainty_ns < best.uncertainty_ns) {
      const std::int64_t fastest = b == 0 ? m.min_rtt_ns : std::min(m.min_rtt_ns, best.min_rtt_ns);
      best = m;
      best.min_rtt_ns = fastest;
    } else {
      best.min_rtt_ns = std::min(best.min_rtt_ns, m.min_rtt_ns);
    }
  }
  return best;
}

void serve_bursts(Transport& t, int client, const GlobalClock& clock, const ResidualParams& p) {
  for (int b = 0; b < std::max(1, p.bursts); ++b)
    serve_offset(t, client, clock);
}

struct Composed {
  std::int64_t offset_ns = 0, uncertainty_ns = 0;
};

/// A leader below the root: waits (politely) for its parent's offset to rank 0, then measures its
/// own clock against the parent's and adds the two (uncertainties add too: each bound is rigorous).
OffsetMeasurement measure_against_parent(Transport& world, int parent, const GlobalClock& clock,
                                         const ResidualParams& p) {
  Composed up;
  world.recv(parent, &up, sizeof up);
  OffsetMeasurement m = best_of_bursts(world, parent, clock, p);
  m.offset_ns += up.offset_ns;
  m.uncertainty_ns += up.uncertainty_ns;
  return m;
}

} // namespace

DomainLayout DomainLayout::from(std::vector<int> domain, std::vector<std::int64_t> host) {
  DomainLayout l;
  const int n = static_cast<int>(domain.size());
  if (n > 0) domain[0] = 0; // rank 0 is the reference: it always leads its domain
  l.domain = domain;
  for (int r = 0; r < n; ++r) {
    const int d = domain[static_cast<std::size_t>(r)];
    const bool trusted = d >= 0 && d < n && domain[static_cast<std::size_t>(d)] == d;
    if (!trusted) l.domain[static_cast<std::size_t>(r)] = r;
  }
  for (int r = 0; r < n; ++r)
    if (l.domain[static_cast<std::size_t>(r)] == r) l.leaders.push_back(r);
  l.host = std::move(host);
  return l;
}

DomainLayout DomainLayout::gather(Transport& world, int my_domain, std::int64_t my_host) {
  const auto domains = world.allgather(my_domain);
  std::vector<int> domain(domains.begin(), domains.end());
  return from(std::move(domain), world.allgather(my_host));
}

void domain_broadcast(Transport& world, const DomainLayout& layout, void* data, std::size_t bytes) {
  const int me = world.rank();
  const int leader = layout.domain[static_cast<std::size_t>(me)];
  std::vector<int> ranks{leader}; // the leader, then the members ascending
  for (int r = 0; r < world.size(); ++r)
    if (r != leader && layout.domain[static_cast<std::size_t>(r)] == leader) ranks.push_back(r);
  const int count = static_cast<int>(ranks.size());
  const int i = static_cast<int>(std::find(ranks.begin(), ranks.end(), me) - ranks.begin());
  if (i > 0) world.recv(ranks[static_cast<std::size_t>(i - highest_bit(i))], data, bytes);
  // Farthest child first: it roots the largest subtree.
  int step = i == 0 ? 1 : 2 * highest_bit(i);
  while (i + 2 * step < count)
    step *= 2;
  for (; step >= (i == 0 ? 1 : 2 * highest_bit(i)); step /= 2)
    if (i + step < count) world.send(ranks[static_cast<std::size_t>(i + step)], data, bytes);
}

int DomainLayout::rounds() const {
  int rounds = 0;
  while ((std::size_t{1} << rounds) < leaders.size())
    ++rounds;
  return rounds;
}

Residual measure_residuals(Transport& world, const GlobalClock& clock, const DomainLayout& layout,
                           const ResidualParams& params) {
  Residual result;
  const int me = world.rank();
  const int leader = layout.domain[static_cast<std::size_t>(me)];
  if (leader != me) {
    // A member: the leader's values, unchanged (this rank reads the leader's clock exactly).
    // It sleeps in the receive while the leaders measure, out of their way.
    std::int64_t w[4];
    domain_broadcast(world, layout, w, sizeof w);
    result.m = {w[0], w[1], w[2], SyncStats::kUnknown};
    return result;
  }
  const auto& leaders = layout.leaders;
  const int count = static_cast<int>(leaders.size());
  const int i = static_cast<int>(std::find(leaders.begin(), leaders.end(), me) - leaders.begin());
  result.m.min_rtt_ns = SyncStats::kUnknown;
  if (i == 0) {
    result.m.time_ns = clock.now();
  } else {
    const int parent = leaders[static_cast<std::size_t>(i - highest_bit(i))];
    result.m = measure_against_parent(world, parent, clock, params);
    result.intra =
        layout.host[static_cast<std::size_t>(parent)] == layout.host[static_cast<std::size_t>(me)];
  }
  // Children in round order: i + 2^k for every 2^k above i's highest bit. Each waits for its
  // parent's go, so a child never spins while its parent serves an earlier child.
  const Composed down{result.m.offset_ns, result.m.uncertainty_ns};
  for (int step = i == 0 ? 1 : 2 * highest_bit(i); i + step < count; step *= 2) {
    const int child = leaders[static_cast<std::size_t>(i + step)];
    world.send(child, &down, sizeof down);
    serve_bursts(world, child, clock, params);
  }
  std::int64_t w[4] = {result.m.time_ns, result.m.offset_ns, result.m.uncertainty_ns,
                       result.m.min_rtt_ns};
  domain_broadcast(world, layout, w, sizeof w);
  return result;
}

} // namespace htrace::clock
