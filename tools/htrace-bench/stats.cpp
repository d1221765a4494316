#include "stats.h"

#include "common/median.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace htrace::stats {

double quantile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double h = (static_cast<double>(values.size()) - 1.0) * std::clamp(p, 0.0, 1.0);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

double median(const std::vector<double>& values) {
  return htrace::median(values);
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

TukeyResult tukey_filter(const std::vector<double>& values, double k) {
  TukeyResult result;
  if (values.empty()) return result;
  const double q1 = quantile(values, 0.25), q3 = quantile(values, 0.75);
  result.lower_fence = q1 - k * (q3 - q1);
  result.upper_fence = q3 + k * (q3 - q1);
  for (double v : values) {
    if (v >= result.lower_fence && v <= result.upper_fence)
      result.kept.push_back(v);
    else
      ++result.removed;
  }
  return result;
}

double rank_sum_cdf(long u, int m, int n) {
  if (u < 0) return 0.0;
  const long max_u = static_cast<long>(m) * n;
  if (u >= max_u) return 1.0;
  // counts[j][v]: orderings of i x-values and j y-values with U = v (pairs x > y). The largest
  // value is either an x (beating all j y's) or a y: c(i,j,v) = c(i-1,j,v-j) + c(i,j-1,v). Only
  // additions of positive numbers, so doubles stay accurate even where the counts exceed 2^53.
  std::vector<std::vector<double>> previous(n + 1, std::vector<double>(max_u + 1, 0.0));
  for (int j = 0; j <= n; ++j)
    previous[j][0] = 1.0; // i = 0: U is 0
  for (int i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> current(n + 1, std::vector<double>(max_u + 1, 0.0));
    current[0][0] = 1.0;
    for (int j = 1; j <= n; ++j)
      for (long v = 0; v <= static_cast<long>(i) * j; ++v)
        current[j][v] = (v >= j ? previous[j][v - j] : 0.0) + current[j - 1][v];
    previous = std::move(current);
  }
  const std::vector<double>& dist = previous[n];
  const double total = std::accumulate(dist.begin(), dist.end(), 0.0);
  const double below = std::accumulate(dist.begin(), dist.begin() + u + 1, 0.0);
  return below / total;
}

RankSumResult wilcoxon_rank_sum(const std::vector<double>& x, const std::vector<double>& y) {
  RankSumResult result;
  const std::size_t nx = x.size(), ny = y.size();
  if (nx == 0 || ny == 0) return result;
  // Midranks of the pooled sample; tie groups feed the variance correction.
  std::vector<std::pair<double, bool>> pooled; // value, is_x
  for (double v : x)
    pooled.emplace_back(v, true);
  for (double v : y)
    pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first)
      ++j;
    const double t = static_cast<double>(j - i);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_x += midrank;
    if (t > 1) ties = true;
    tie_term += t * t * t - t;
    i = j;
  }
  const double m = static_cast<double>(nx), n = static_cast<double>(ny);
  result.w = rank_sum_x - m * (m + 1) / 2.0;

  if (nx < 50 && ny < 50 && !ties) {
    result.exact = true;
    const long w = std::lround(result.w);
    const double p = result.w > m * n / 2.0
                         ? 1.0 - rank_sum_cdf(w - 1, static_cast<int>(nx), static_cast<int>(ny))
                         : rank_sum_cdf(w, static_cast<int>(nx), static_cast<int>(ny));
    result.p_value = std::min(1.0, 2.0 * p);
    return result;
  }
  const double z0 = result.w - m * n / 2.0;
  const double sigma =
      std::sqrt((m * n / 12.0) * ((m + n + 1.0) - tie_term / ((m + n) * (m + n - 1.0))));
  if (sigma == 0) return result; // all values equal: no evidence of a difference
  const double correction = z0 > 0 ? 0.5 : (z0 < 0 ? -0.5 : 0.0);
  const double z = (z0 - correction) / sigma;
  result.p_value = std::min(1.0, std::erfc(std::fabs(z) / std::sqrt(2.0)));
  return result;
}

} // namespace htrace::stats
