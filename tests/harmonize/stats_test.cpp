// Statistics of htrace-bench against values computed by hand, by brute-force enumeration of the
// null distribution, and against R's documented wilcox.test example.
#include "common/median.h"
#include "stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

using namespace htrace::stats;

TEST(Quantile, MatchesType7) {
  const std::vector<double> v{10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 3.25);
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 7.75);
  EXPECT_DOUBLE_EQ(median(v), 5.5);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 6}), 3);
  EXPECT_TRUE(std::isnan(median({})));
}

// htrace::median (libtrace/common/median.h), which stats::median and the tracer share.
TEST(Median, IntegersOddEvenEmpty) {
  EXPECT_EQ(htrace::median<std::int64_t>({9, 1, 5}), 5);
  EXPECT_EQ(htrace::median<std::int64_t>({4, 1, 3, 2}), 2); // (2 + 3) / 2 toward the lower
  EXPECT_EQ(htrace::median<std::int64_t>({-7, 7}), 0);
  EXPECT_EQ(htrace::median<std::int64_t>({INT64_MAX - 2, INT64_MAX}), INT64_MAX - 1); // no overflow
  EXPECT_EQ(htrace::median<std::int64_t>({}), 0);
}

TEST(Tukey, RemovesValuesBeyondTheFences) {
  // Q1 = 3.25, Q3 = 7.75, IQR = 4.5: fences -3.5 and 14.5.
  const TukeyResult r = tukey_filter({1, 2, 3, 4, 5, 6, 7, 8, 9, 100});
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.kept.size(), 9u);
  EXPECT_DOUBLE_EQ(r.lower_fence, -3.5);
  EXPECT_DOUBLE_EQ(r.upper_fence, 14.5);
  EXPECT_EQ(std::count(r.kept.begin(), r.kept.end(), 100.0), 0);
  // A value exactly on the fence stays.
  EXPECT_EQ(tukey_filter({1, 2, 3, 4, 5, 6, 7, 8, 9, 14.5}).removed, 0u);
  EXPECT_EQ(tukey_filter({}).kept.size(), 0u);
}

// Brute force: P(U <= u) by enumerating every choice of x positions among m + n ranks.
static double enumerate_cdf(long u, int m, int n) {
  std::vector<int> pick(m + n, 0);
  std::fill(pick.end() - m, pick.end(), 1);
  long hits = 0, total = 0;
  do {
    long count = 0, ys_below = 0; // U = pairs (x, y) with x above y
    for (int v : pick)
      (v ? count += ys_below : ++ys_below);
    ++total;
    if (count <= u) ++hits;
  } while (std::next_permutation(pick.begin(), pick.end()));
  return static_cast<double>(hits) / static_cast<double>(total);
}

TEST(RankSum, ExactDistributionMatchesEnumeration) {
  for (int m = 1; m <= 6; ++m)
    for (int n = 1; n <= 7; ++n)
      for (long u = -1; u <= m * n; ++u)
        EXPECT_NEAR(rank_sum_cdf(u, m, n), enumerate_cdf(u, m, n), 1e-12) << m << " " << n;
}

TEST(RankSum, ExactSmallSamples) {
  // Complete separation: P = 2 / C(6,3) = 0.1 and 2 / C(10,5) = 2/252.
  RankSumResult r = wilcoxon_rank_sum({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.w, 0);
  EXPECT_NEAR(r.p_value, 0.1, 1e-12);
  r = wilcoxon_rank_sum({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.w, 25);
  EXPECT_NEAR(r.p_value, 2.0 / 252.0, 1e-12);
  // R's ?wilcox.test example (Hollander & Wolfe): W = 35, one-sided p = 0.1272, so two-sided
  // 0.2544.
  r = wilcoxon_rank_sum({0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
                        {1.15, 0.88, 0.90, 0.74, 1.21});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.w, 35);
  EXPECT_NEAR(r.p_value, 0.2544, 5e-4);
  EXPECT_NEAR(r.p_value, 2 * (1 - enumerate_cdf(34, 10, 5)), 1e-12);
  // Identical samples without ties between them cannot be distinguished.
  EXPECT_NEAR(wilcoxon_rank_sum({1, 4}, {2, 3}).p_value, 1.0, 1e-12);
}

TEST(RankSum, NormalApproximationWithTies) {
  // By hand: midranks give W = 3; tie groups of 3 and 2 -> sum(t^3 - t) = 30;
  // sigma^2 = 20/12 * (10 - 30/72) = 15.972; z = (3 - 10 + 0.5) / 3.9965 = -1.6264; p = 0.10386.
  const RankSumResult r = wilcoxon_rank_sum({1, 2, 2, 4}, {2, 3, 5, 5, 6});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.w, 3);
  EXPECT_NEAR(r.p_value, 0.103862, 1e-5);
  // All values tied: no evidence.
  EXPECT_DOUBLE_EQ(wilcoxon_rank_sum({5, 5, 5}, {5, 5}).p_value, 1.0);
}

TEST(RankSum, NormalApproximationForLargeSamples) {
  // 0..59 vs 30.5..89.5 (no ties, n >= 50): W = 435, z = (435 - 1800 + 0.5) / sqrt(3600 * 121 /
  // 12).
  std::vector<double> x, y;
  for (int i = 0; i < 60; ++i)
    x.push_back(i), y.push_back(i + 30.5);
  const RankSumResult r = wilcoxon_rank_sum(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.w, 435);
  const double z = (435 - 1800 + 0.5) / std::sqrt(3600.0 * 121.0 / 12.0);
  EXPECT_NEAR(r.p_value, std::erfc(std::fabs(z) / std::sqrt(2.0)), 1e-15);
  EXPECT_NEAR(r.p_value, 7.9643e-13, 1e-16);
}
