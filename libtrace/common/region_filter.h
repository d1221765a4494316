// Score-P's filter-file syntax, applied to region names: the filter files users already keep for
// Score-P select which MPI functions libhtrace records (HTRACE_FILTER_FILE).
//
//   # comment to the end of the line
//   SCOREP_REGION_NAMES_BEGIN
//     EXCLUDE MPI_Test* MPI_Iprobe      # shell wildcards: * ? [...]
//     INCLUDE MPI_Testall               # rules apply in order; the last one that matches wins
//     EXCLUDE MANGLED MPI_?probe        # MANGLED is accepted and ignored (no mangled names here)
//   SCOREP_REGION_NAMES_END
//   SCOREP_FILE_NAMES_BEGIN ... SCOREP_FILE_NAMES_END   # accepted, counted, not applied
//
// A rule's patterns run on over lines until the next keyword. Names match case-sensitively, as in
// Score-P. A name no rule matches is included.
#pragma once

#include <string>
#include <vector>

namespace htrace {

class RegionFilter {
public:
  struct Rule {
    bool exclude = false;
    std::string pattern;
  };

  /// True when the last rule matching `name` is an EXCLUDE.
  bool excludes(const char* name) const;

  const std::vector<Rule>& rules() const { return rules_; }
  /// Patterns of SCOREP_FILE_NAMES blocks: read, but regions without a source file (MPI
  /// functions) never match them.
  int file_rules() const { return file_rules_; }

private:
  friend struct FilterParser;
  std::vector<Rule> rules_;
  int file_rules_ = 0;
};

struct RegionFilterResult {
  RegionFilter filter;
  std::string error; ///< "line N: what is wrong", or why the file cannot be read
  bool ok() const { return error.empty(); }
};

/// Parses the text of a filter file.
RegionFilterResult parse_region_filter(const std::string& text);
/// Reads and parses the filter file at `path`.
RegionFilterResult read_region_filter(const std::string& path);

} // namespace htrace
