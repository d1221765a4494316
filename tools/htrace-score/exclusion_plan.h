// --limit: which MPI functions to leave out (HTRACE_MPI_EXCLUDE) so that the projected archive
// fits a size. Greedy: the excludable function whose exclusion removes the most projected bytes
// first, until the projection is at or under the limit. What a function's exclusion removes is
// its calls' own records that the wrappers would really leave out (location_scan.h); functions
// libhtrace never excludes (MPI_Init, communicator constructors, ...) are never suggested.
#pragma once

#include "projection.h"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::score {

struct ExclusionStep {
  const RegionRow* row;
  double removed;    ///< projected bytes its exclusion removes
  double size_after; ///< the projection once it and the steps before it are excluded
};

struct ExclusionPlan {
  std::uint64_t limit = 0;
  double size_before = 0, size_after = 0;
  bool reached = false; ///< size_after <= limit
  std::vector<ExclusionStep> steps;

  /// The value of HTRACE_MPI_EXCLUDE: the functions' names, comma-separated.
  std::string htrace_value() const;
  /// The same selection as a Score-P filter file.
  std::string scorep_filter() const;
};

/// `rows`: the archive's rows; `projection`: the projected size for `scale`.
ExclusionPlan plan_exclusions(const std::vector<RegionRow>& rows, const Scale& scale,
                              double projection, std::uint64_t limit);

} // namespace htrace::score
