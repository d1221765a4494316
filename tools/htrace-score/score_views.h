// The views both reports show, derived from the tally: families, regions by bytes, the ranks'
// distribution, the polls folded into runs; and the model in words.
#pragma once

#include "projection.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace htrace::score {

struct FamilyTotal {
  std::uint64_t calls = 0, records = 0, bytes = 0, removable = 0;
  double projected = 0;
};

/// Families by bytes: MPI families, paradigms, and the pseudo-rows under their own names.
std::vector<std::pair<std::string, FamilyTotal>> families(const ArchiveScore& a,
                                                          const Scale& scale);

/// Rows with any bytes or records, by bytes (ties by name).
std::vector<const RegionRow*> rows_by_bytes(const ArchiveScore& a);

struct RankSummary {
  std::vector<const RankTally*> by_bytes; ///< descending
  const RankTally* min = nullptr;
  const RankTally* median = nullptr; ///< the upper middle one
  const RankTally* max = nullptr;
};
RankSummary rank_summary(const ArchiveScore& a);

/// A rank's window in seconds.
double window_seconds(const ArchiveScore& a, const RankTally& r);

/// Calls and records of the polling functions (MPI_Test*, MPI_Iprobe, MPI_Improbe).
struct PollTotals {
  std::uint64_t calls = 0, records = 0;
};
PollTotals poll_totals(const ArchiveScore& a);

/// The model in words, as the reports' headers state it.
std::string model_statement();

} // namespace htrace::score
