#include "report_scale.h"

#include <algorithm>

namespace htrace::report {

ReportScale report_scale(const ArchiveDefs& defs) {
  ReportScale s;
  s.ranks = defs.processes.size();
  s.locations = defs.locations.size();
  s.summarized = s.ranks > ReportScale::kFullDetail || s.locations > ReportScale::kFullDetail;
  const auto blocks = [](std::size_t n) {
    return std::max<std::size_t>(1, (n + ReportScale::kMaxSide - 1) / ReportScale::kMaxSide);
  };
  s.in_detail.assign(s.locations, !s.summarized);
  if (!s.summarized) {
    for (std::uint32_t i = 0; i < s.locations; ++i)
      s.detail_locations.push_back(i);
    return s;
  }
  s.rank_block = blocks(s.ranks);
  s.location_block = blocks(s.locations);
  // Evenly spaced, the first and the last included.
  const std::size_t rows = std::min(s.locations, ReportScale::kMaxSide);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto loc = static_cast<std::uint32_t>(rows == 1 ? 0 : i * (s.locations - 1) / (rows - 1));
    if (!s.in_detail[loc]) s.detail_locations.push_back(loc);
    s.in_detail[loc] = true;
  }
  return s;
}

std::string block_label(std::size_t b, std::size_t block, std::size_t n, const char* what) {
  const std::size_t first = b * block, last = std::min(n, first + block) - 1;
  return std::string(what) + " " + std::to_string(first) +
         (last > first ? "-" + std::to_string(last) : "");
}

} // namespace htrace::report
