// A figure given per rank (or location), summarized for a page that cannot list every rank: its
// distribution (min, quartiles, median, max, mean), a histogram, and the ranks at both ends.
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

namespace htrace::report {

/// Writes {"dist":[min,q1,median,q3,max,mean],"hist":{"lo":..,"hi":..,"counts":[..]},
/// "top":[[index,value]..],"bottom":[[index,value]..]} of `values` (nearest-rank quartiles; top
/// and bottom `extremes` indices by value, ties by index; `bins` equal histogram bins).
void write_rank_summary(std::ostream& out, const std::vector<std::uint64_t>& values,
                        std::size_t extremes, std::size_t bins);

/// The indices of the `n` largest and the `n` smallest values (all of them when there are at most
/// 2n), largest first; among equal values the lower index first.
std::vector<std::uint32_t> largest(const std::vector<std::int64_t>& values, std::size_t n);

} // namespace htrace::report
