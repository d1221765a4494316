#include "rank_summary.h"

#include <algorithm>
#include <numeric>

namespace htrace::report {
namespace {

void pairs(std::ostream& o, const std::vector<std::uint32_t>& order,
           const std::vector<std::uint64_t>& values) {
  o << '[';
  for (std::size_t i = 0; i < order.size(); ++i)
    o << (i ? "," : "") << '[' << order[i] << ',' << values[order[i]] << ']';
  o << ']';
}

} // namespace

void write_rank_summary(std::ostream& o, const std::vector<std::uint64_t>& values,
                        std::size_t extremes, std::size_t bins) {
  std::vector<std::uint32_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return values[a] < values[b]; });
  const std::size_t n = values.size();
  const auto at = [&](double q) {
    return n ? values[order[static_cast<std::size_t>(q * static_cast<double>(n - 1) + 0.5)]] : 0;
  };
  const double sum = std::accumulate(values.begin(), values.end(), 0.0);
  o << "{\"dist\":[" << at(0) << ',' << at(0.25) << ',' << at(0.5) << ',' << at(0.75) << ','
    << at(1) << ',' << (n ? static_cast<std::uint64_t>(sum / static_cast<double>(n) + 0.5) : 0)
    << "],\"hist\":{\"lo\":" << at(0) << ",\"hi\":" << at(1) << ",\"counts\":[";
  std::vector<std::uint64_t> counts(bins);
  const double lo = static_cast<double>(at(0)), width = static_cast<double>(at(1)) - lo;
  for (std::uint64_t v : values) {
    const double x = width > 0 ? (static_cast<double>(v) - lo) / width : 0;
    ++counts[std::min(bins - 1, static_cast<std::size_t>(x * static_cast<double>(bins)))];
  }
  for (std::size_t i = 0; i < bins; ++i)
    o << (i ? "," : "") << counts[i];
  o << "]},\"top\":";
  const std::size_t k = std::min(extremes, n);
  std::vector<std::uint32_t> top(order.rbegin(), order.rbegin() + static_cast<long>(k));
  // Among equal values the lower index first, at both ends.
  std::stable_sort(top.begin(), top.end(), [&](std::uint32_t a, std::uint32_t b) {
    return values[a] != values[b] ? values[a] > values[b] : a < b;
  });
  pairs(o, top, values);
  o << ",\"bottom\":";
  pairs(o, std::vector<std::uint32_t>(order.begin(), order.begin() + static_cast<long>(k)), values);
  o << '}';
}

std::vector<std::uint32_t> largest(const std::vector<std::int64_t>& values, std::size_t n) {
  std::vector<std::uint32_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return values[a] > values[b]; });
  if (order.size() > 2 * n)
    order.erase(order.begin() + static_cast<long>(n), order.end() - static_cast<long>(n));
  return order;
}

} // namespace htrace::report
