// Results of htrace-bench: per-experiment summary (Tukey-filtered statistics), CSV files written
// atomically, and `compare` (Wilcoxon rank-sum test per operation and size of two raw files).
#pragma once

#include "measure.h"

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace htrace::bench {

struct Summary {
  std::string op, sync;
  std::size_t bytes = 0;
  int ranks = 0;
  std::size_t measurements = 0, invalid = 0, outliers = 0;
  double median_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0; ///< of valid, Tukey-kept run-times
  double skew_median_ns = 0, skew_max_ns = 0;                ///< exit skew of valid measurements
};

Summary summarize(const std::string& op, const std::string& sync, std::size_t bytes, int ranks,
                  const std::vector<Measurement>& measurements);

extern const char* const kSummaryHeader; ///< CSV header of --csv
extern const char* const kRawHeader;     ///< CSV header of --raw
std::string summary_row(const Summary& s);
void print_table_header(std::FILE* out);
void print_table_row(std::FILE* out, const Summary& s);

/// `htrace-bench compare A B [-o OUTPUT]` (command line in bench_config): returns the process
/// exit code; messages go to stdout/stderr.
int run_compare(const std::string& file_a, const std::string& file_b, const std::string& output);

} // namespace htrace::bench
