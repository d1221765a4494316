// The one median of htrace: MPIX_Harmonize's round trip, the benchmarks' latency estimates and
// statistics and htrace-clockcheck's offsets all use it, so every figure called "median" means
// the same thing. Header-only (no MPI, no state): the tools use it without linking libhtrace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

namespace htrace {

/// Median of `values` (taken by value and reordered, O(n)). An even count gives the mean of the
/// two middle elements (for integers rounded toward the lower one, without overflow). An empty
/// input gives NaN for floating-point types and 0 for integers.
template <typename T> T median(std::vector<T> values) {
  static_assert(std::is_arithmetic_v<T>, "median of numbers");
  if (values.empty()) {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
    return T{};
  }
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  const T upper = *mid;
  if (values.size() % 2 == 1) return upper;
  const T lower = *std::max_element(values.begin(), mid); // the largest of the lower half
  return lower + (upper - lower) / 2;
}

} // namespace htrace
