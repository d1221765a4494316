// Algorithm 2 (learning a clock model between two ranks) and the flat algorithms built from it:
// JK (every rank against the root in turn), HCA2 (models learnt up an inverted binomial tree and
// merged at the root), HCA (HCA2 plus a final intercept against the root) and HCA3 (the root's
// time pushed down a binomial tree, each client timestamping with its parent's global clock).
#include "clock/algorithms.h"
#include "clock/offset.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>

namespace htrace::clock {

namespace {
constexpr double kMaxAutoSlopeStderr = 1e-6;
}

void SyncContext::note_rtt(std::int64_t rtt) {
  std::int64_t& slot = level == Level::Intra   ? stats.min_rtt_intra_ns
                       : level == Level::Inter ? stats.min_rtt_inter_ns
                                               : stats.min_rtt_other_ns;
  slot = std::min(slot, rtt);
}

LinearModel learn_clock_model(Transport& t, int reference, int client, const GlobalClock& clock,
                              const PairParams& p, SyncContext& ctx) {
  // One discarded warm-up measurement first: the first messages between a pair pay for
  // connection setup (lazy TCP connections) and wake-ups, which skews the first fit points.
  const int measurements = 1 + p.fitpoints + (p.recompute_intercept ? 1 : 0);
  if (t.rank() == reference) {
    for (int i = 0; i < measurements; ++i)
      serve_offset(t, client, clock);
    return {};
  }
  // The client's clock gets a model of its own: it is its own clock domain from now on.
  ctx.stats.domain = ctx.self;
  (void)measure_offset_client(t, reference, clock, p.offset, p.pingpongs);
  std::vector<FitPoint> points;
  std::vector<std::int64_t> uncertainty;
  const std::int64_t start = clock.base_now();
  for (int i = 0; i < p.fitpoints; ++i) {
    if (p.window_ns > 0 && i > 0) {
      // Spread the fit points: a slope from points taken back to back is mostly noise.
      const std::int64_t due = start + p.window_ns * i / std::max(1, p.fitpoints - 1);
      const std::int64_t wait = due - clock.base_now();
      if (wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    }
    const OffsetMeasurement m = measure_offset_client(t, reference, clock, p.offset, p.pingpongs);
    ctx.note_rtt(m.min_rtt_ns);
    points.push_back({m.time_ns, m.offset_ns});
    uncertainty.push_back(m.uncertainty_ns);
  }
  // A fit point whose exchanges were all delayed (preemption, a busy network) carries a wide
  // bound; drop those so that they do not drag the line (the lucky fast exchange is the truth).
  const std::int64_t best = *std::min_element(uncertainty.begin(), uncertainty.end());
  std::size_t best_index = 0;
  std::vector<FitPoint> good;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (uncertainty[i] == best) best_index = i;
    if (uncertainty[i] <= 3 * best + 1000) good.push_back(points[i]);
  }
  FitResult fit = fit_linear_model(good);
  // auto: keep a slope only if it is known to better than 1 ppm and differs from 0 by more than
  // 3 standard errors. Points taken within milliseconds never qualify, and a wrong slope hurts
  // far more over a run than no slope (a bogus 1e-4 is 1 ms after 10 s).
  const bool keep_slope = p.slope == SlopePolicy::Fit ||
                          (p.slope == SlopePolicy::Auto && good.size() >= 3 &&
                           fit.slope_stderr > 0 && fit.slope_stderr < kMaxAutoSlopeStderr &&
                           std::fabs(fit.model.slope) > 3.0 * fit.slope_stderr);
  if (!keep_slope) {
    // Offset-only model from the fit point with the tightest bound.
    fit.model = LinearModel{points[best_index].time_ns, points[best_index].offset_ns, 0.0};
  }
  if (p.recompute_intercept) {
    const OffsetMeasurement m = measure_offset_client(t, reference, clock, p.offset, p.pingpongs);
    ctx.note_rtt(m.min_rtt_ns);
    // Only a measurement at least as tight as the model's best point may move the intercept.
    if (m.uncertainty_ns <= best)
      fit.model.offset_at_origin_ns =
          m.offset_ns -
          std::llround(fit.model.slope * static_cast<double>(m.time_ns - fit.model.origin_ns));
  }
  return fit.model;
}

namespace {

int floor_log2(int n) {
  int r = 0;
  while ((2 << r) <= n)
    ++r;
  return r;
}

// Model lists travel as int64 words: count, then (rank, origin, offset, slope bits) each.
void send_models(Transport& t, int peer, const std::map<int, LinearModel>& models) {
  std::vector<std::int64_t> w{static_cast<std::int64_t>(models.size())};
  for (const auto& [rank, m] : models) {
    std::int64_t slope_bits;
    std::memcpy(&slope_bits, &m.slope, sizeof slope_bits);
    w.insert(w.end(), {rank, m.origin_ns, m.offset_at_origin_ns, slope_bits});
  }
  t.send_i64(peer, static_cast<std::int64_t>(w.size()));
  t.send(peer, w.data(), w.size() * sizeof(std::int64_t));
}

std::map<int, LinearModel> recv_models(Transport& t, int peer) {
  std::vector<std::int64_t> w(static_cast<std::size_t>(t.recv_i64(peer)));
  t.recv(peer, w.data(), w.size() * sizeof(std::int64_t));
  std::map<int, LinearModel> models;
  for (std::size_t i = 1; i + 3 < w.size(); i += 4) {
    LinearModel m;
    m.origin_ns = w[i + 1];
    m.offset_at_origin_ns = w[i + 2];
    std::memcpy(&m.slope, &w[i + 3], sizeof m.slope);
    models[static_cast<int>(w[i])] = m;
  }
  return models;
}

} // namespace

GlobalClock sync_jk(Transport& t, const GlobalClock& input, const PairParams& p, SyncContext& ctx) {
  if (t.rank() == 0) {
    for (int r = 1; r < t.size(); ++r)
      learn_clock_model(t, 0, r, input, p, ctx);
    return input;
  }
  return input.with(learn_clock_model(t, 0, t.rank(), input, p, ctx));
}

GlobalClock sync_hca3(Transport& t, const GlobalClock& input, const PairParams& p,
                      SyncContext& ctx) {
  const int n = t.size(), r = t.rank();
  const int rounds = floor_log2(n);
  const int max_power = 1 << rounds;
  GlobalClock mine = input;
  // Step 1: the root's time travels down a binomial tree over ranks [0, max_power).
  for (int i = rounds; i >= 1 && r < max_power; --i) {
    const int running = 1 << i, next = 1 << (i - 1);
    if (r % running == 0) {
      learn_clock_model(t, r, r + next, mine, p, ctx);
    } else if (r % running == next) {
      mine = input.with(learn_clock_model(t, r - next, r, input, p, ctx));
    }
  }
  // Step 2: ranks beyond the largest power of two learn from rank - max_power.
  if (r >= max_power) {
    mine = input.with(learn_clock_model(t, r - max_power, r, input, p, ctx));
  } else if (r < n - max_power) {
    learn_clock_model(t, r, r + max_power, mine, p, ctx);
  }
  return mine;
}

GlobalClock sync_hca2(Transport& t, const GlobalClock& input, const PairParams& p,
                      SyncContext& ctx) {
  const int n = t.size(), r = t.rank();
  const int max_power = 1 << floor_log2(n);
  std::map<int, LinearModel> subtree; // member -> model of its clock against mine
  bool sent_up = false;
  if (r >= max_power) {
    // Ranks beyond the largest power of two report to rank - max_power first.
    send_models(t, r - max_power, {{r, learn_clock_model(t, r - max_power, r, input, p, ctx)}});
    sent_up = true;
  } else if (r < n - max_power) {
    learn_clock_model(t, r, r + max_power, input, p, ctx);
    subtree = recv_models(t, r + max_power);
  }
  // Inverted binomial tree: models flow towards rank 0 and are merged on the way.
  for (int step = 1; step < max_power && !sent_up; step <<= 1) {
    if (r % (2 * step) == step) {
      const LinearModel up = learn_clock_model(t, r - step, r, input, p, ctx);
      std::map<int, LinearModel> report{{r, up}};
      for (const auto& [member, m] : subtree)
        report[member] = compose(up, m);
      send_models(t, r - step, report);
      sent_up = true;
    } else if (r % (2 * step) == 0) {
      learn_clock_model(t, r, r + step, input, p, ctx);
      for (const auto& [member, m] : recv_models(t, r + step))
        subtree[member] = m;
    }
  }
  // The root now holds a model for every rank; it hands each its own (the scatter).
  if (r == 0) {
    for (int q = 1; q < n; ++q)
      send_models(t, q, {{q, subtree[q]}});
    return input;
  }
  const auto mine = recv_models(t, 0);
  return input.with(mine.at(r));
}

GlobalClock sync_hca(Transport& t, const GlobalClock& input, const PairParams& p,
                     SyncContext& ctx) {
  GlobalClock hca2 = sync_hca2(t, input, p, ctx);
  // One more offset measurement against the root per rank (O(p)) fixes the accumulated intercept.
  if (t.rank() == 0) {
    for (int q = 1; q < t.size(); ++q)
      serve_offset(t, q, input);
    return hca2;
  }
  LinearModel m = hca2.models().back();
  const OffsetMeasurement o = measure_offset_client(t, 0, input, p.offset, p.pingpongs);
  ctx.note_rtt(o.min_rtt_ns);
  m.offset_at_origin_ns =
      o.offset_ns - std::llround(m.slope * static_cast<double>(o.time_ns - m.origin_ns));
  return input.with(m);
}

} // namespace htrace::clock
