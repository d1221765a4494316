#include "clock/residual.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

namespace htrace::clock {
namespace {

int highest_bit(int i) {
  int b = 1;
  while (b * 2 <= i)
    b *= 2;
  return b;
}

/// Whether the client decides how many bursts it takes (both partners know it from the params).
bool repeats_until_tight(const ResidualParams& p) {
  return p.intersect && p.max_bursts > p.bursts;
}

/// The client's burst of 0 exchanges: the partner's serve_offset returns 0 and stops serving.
void end_bursts(Transport& t, int ref) {
  t.send_i64(ref, 0);
  (void)t.recv_i64(ref);
}

/// `bursts` SKaMPI measurements, both partners sleeping `pause` in between: one burst lasts about
/// half a millisecond, less than a scheduler time slice, so a busy core can delay every exchange
/// of a burst; after a sleep the pair is scheduled promptly again.
///
/// The estimate is the tightest burst's middle, or with `p.intersect` the middle of all bursts'
/// bounds intersected: that rests on the fastest exchange in each direction over all bursts,
/// where the tightest burst's own middle rests on its own two, and where ranks outnumber cores
/// one direction of a burst can be delayed throughout (the tightest of 12 bursts left a node 2.2
/// us off on a loaded machine, within its bound). The bound stays that of the tightest burst,
/// widened by how far the estimate lies from its middle: it holds whatever the drift between
/// bursts (the intersection lies inside that bound). But drift shifts the intersection: bounds
/// taken at different times of a clock 20 ppm off, 100 ms apart on a busy machine, meet 2 us
/// off the offset at any one of them; so only the measurement right after the sync intersects.
/// Bounds without a common point fall back to the tightest burst's middle.
///
/// `fastest_rtt_ns` (0: unknown) asks for bursts beyond p.bursts until the intersection is that
/// tight (ResidualParams); the partner serves until a burst of 0 exchanges ends them.
OffsetMeasurement best_of_bursts(Transport& t, int ref, const GlobalClock& clock,
                                 const ResidualParams& p, std::int64_t fastest_rtt_ns) {
  OffsetMeasurement best;
  std::int64_t low = std::numeric_limits<std::int64_t>::min();
  std::int64_t high = std::numeric_limits<std::int64_t>::max();
  const bool until_tight = repeats_until_tight(p);
  const auto started = std::chrono::steady_clock::now();
  const auto more = [&](int b) {
    if (b < std::max(1, p.bursts)) return true;
    if (!until_tight || fastest_rtt_ns <= 0 || b >= p.max_bursts || low > high) return false;
    if (std::chrono::steady_clock::now() - started > p.time_limit) return false;
    return (high - low) / 2 > std::min(fastest_rtt_ns, best.min_rtt_ns) / 2 + p.slack_ns;
  };
  for (int b = 0; more(b); ++b) {
    if (b > 0) std::this_thread::sleep_for(p.pause);
    const OffsetMeasurement m =
        measure_offset_client(t, ref, clock, OffsetMethod::Skampi, p.pingpongs);
    low = std::max(low, m.offset_ns - m.uncertainty_ns);
    high = std::min(high, m.offset_ns + m.uncertainty_ns);
    if (b == 0 || m.uncertainty_ns < best.uncertainty_ns) {
      const std::int64_t fastest = b == 0 ? m.min_rtt_ns : std::min(m.min_rtt_ns, best.min_rtt_ns);
      best = m;
      best.min_rtt_ns = fastest;
    } else {
      best.min_rtt_ns = std::min(best.min_rtt_ns, m.min_rtt_ns);
    }
  }
  if (until_tight) end_bursts(t, ref);
  if (!p.intersect || low > high) return best;
  const std::int64_t middle = low + (high - low) / 2;
  const std::int64_t moved =
      middle > best.offset_ns ? middle - best.offset_ns : best.offset_ns - middle;
  best.offset_ns = middle;
  best.uncertainty_ns += moved;
  return best;
}

void serve_bursts(Transport& t, int client, const GlobalClock& clock, const ResidualParams& p) {
  if (repeats_until_tight(p)) {
    while (serve_offset(t, client, clock) > 0) {
    }
    return;
  }
  for (int b = 0; b < std::max(1, p.bursts); ++b)
    serve_offset(t, client, clock);
}

struct Composed {
  std::int64_t offset_ns = 0, uncertainty_ns = 0;
};

/// A leader below the root: waits (politely) for its parent's offset to rank 0, then measures its
/// own clock against the parent's and adds the two (uncertainties add too: each bound is rigorous).
OffsetMeasurement measure_against_parent(Transport& world, int parent, const GlobalClock& clock,
                                         const ResidualParams& p, bool intra) {
  Composed up;
  world.recv(parent, &up, sizeof up);
  OffsetMeasurement m = best_of_bursts(world, parent, clock, p,
                                       intra ? p.fastest_rtt_intra_ns : p.fastest_rtt_inter_ns);
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
    result.intra =
        layout.host[static_cast<std::size_t>(parent)] == layout.host[static_cast<std::size_t>(me)];
    result.m = measure_against_parent(world, parent, clock, params, result.intra);
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
