// Statistics for benchmark samples (Hunold & Carpen-Amarie, "Reproducible MPI benchmarking"):
// quantiles, Tukey's outlier filter and the Wilcoxon rank-sum test. No MPI, no I/O.
#pragma once

#include <cstddef>
#include <vector>

namespace htrace::stats {

/// Quantile p in [0,1] by linear interpolation between order statistics (Hyndman & Fan type 7,
/// R's default). `values` need not be sorted. Empty input gives NaN.
double quantile(std::vector<double> values, double p);
double median(const std::vector<double>& values);
double mean(const std::vector<double>& values);

struct TukeyResult {
  std::vector<double> kept; ///< in input order
  std::size_t removed = 0;
  double lower_fence = 0, upper_fence = 0;
};

/// Keeps the values within [Q1 - k*IQR, Q3 + k*IQR] (k = 1.5: Tukey's inner fences).
TukeyResult tukey_filter(const std::vector<double>& values, double k = 1.5);

struct RankSumResult {
  double w = 0;       ///< R's W: rank sum of x minus nx(nx+1)/2 (= Mann-Whitney U of x)
  double p_value = 1; ///< two-sided
  bool exact =
      false; ///< exact null distribution (no ties, both samples < 50) vs normal approximation
};

/// Two-sided Wilcoxon rank-sum (Mann-Whitney) test of x against y, as R's wilcox.test(x, y):
/// exact p-value when both samples have fewer than 50 values and there are no ties, otherwise the
/// normal approximation with tie correction and continuity correction. Needs non-empty samples.
RankSumResult wilcoxon_rank_sum(const std::vector<double>& x, const std::vector<double>& y);

/// P(U <= u) under the null hypothesis for sample sizes m and n (exact, by counting).
double rank_sum_cdf(long u, int m, int n);

} // namespace htrace::stats
