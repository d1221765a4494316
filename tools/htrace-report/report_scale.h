// How much of a run the HTML report shows one by one. Up to kFullDetail ranks and locations every
// rank and location is shown by itself; beyond, a screen cannot show them, so the page sums ranks
// into blocks (the communication matrix at most kMaxSide x kMaxSide cells, each the sum of a block
// of consecutive ranks), averages locations into blocks (the timeline overview at most kMaxSide
// rows), draws the detail timeline for kMaxSide locations evenly spaced over the run, and gives per
// rank figures as distributions with the extreme ranks. The page's size then stays bounded
// whatever the number of ranks.
#pragma once

#include "archive_defs.h"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::report {

struct ReportScale {
  static constexpr std::size_t kFullDetail = 64; ///< ranks and locations shown one by one
  static constexpr std::size_t kMaxSide = 64;    ///< matrix blocks per side, timeline rows
  static constexpr std::size_t kExtremes = 10;   ///< top and bottom ranks listed per figure

  bool summarized = false;
  std::size_t ranks = 0, locations = 0;
  std::size_t rank_block = 1;                  ///< consecutive ranks per matrix block
  std::size_t location_block = 1;              ///< consecutive locations per overview row
  std::vector<std::uint32_t> detail_locations; ///< the detail timeline's rows, ascending
  std::vector<bool> in_detail;                 ///< per location: one of detail_locations

  std::size_t matrix_side() const { return (ranks + rank_block - 1) / rank_block; }
  std::size_t overview_rows() const { return (locations + location_block - 1) / location_block; }
};

ReportScale report_scale(const ArchiveDefs& defs);

/// The label of block `b` of `block` consecutive items out of `n`: "ranks 0-31", "ranks 64".
std::string block_label(std::size_t b, std::size_t block, std::size_t n, const char* what);

} // namespace htrace::report
