#include "report.h"

#include "common/atomic_file.h"
#include "stats.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace htrace::bench {

const char* const kSummaryHeader =
    "op,bytes,sync,ranks,measurements,invalid,outliers,median_ns,mean_ns,min_ns,max_ns,"
    "exit_skew_median_ns,exit_skew_max_ns";
const char* const kRawHeader = "op,bytes,sync,index,runtime_ns,exit_skew_ns,valid";

Summary summarize(const std::string& op, const std::string& sync, std::size_t bytes, int ranks,
                  const std::vector<Measurement>& measurements) {
  Summary s{op, sync, bytes, ranks};
  s.measurements = measurements.size();
  std::vector<double> runtimes, skews;
  for (const Measurement& m : measurements) {
    if (!m.valid) {
      ++s.invalid;
      continue;
    }
    runtimes.push_back(static_cast<double>(m.runtime_ns));
    skews.push_back(static_cast<double>(m.exit_skew_ns));
  }
  const stats::TukeyResult kept = stats::tukey_filter(runtimes);
  s.outliers = kept.removed;
  if (!kept.kept.empty()) {
    s.median_ns = stats::median(kept.kept);
    s.mean_ns = stats::mean(kept.kept);
    s.min_ns = stats::quantile(kept.kept, 0.0);
    s.max_ns = stats::quantile(kept.kept, 1.0);
  }
  if (!skews.empty()) {
    s.skew_median_ns = stats::median(skews);
    s.skew_max_ns = stats::quantile(skews, 1.0);
  }
  return s;
}

std::string summary_row(const Summary& s) {
  char line[512];
  std::snprintf(line, sizeof line, "%s,%zu,%s,%d,%zu,%zu,%zu,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f",
                s.op.c_str(), s.bytes, s.sync.c_str(), s.ranks, s.measurements, s.invalid,
                s.outliers, s.median_ns, s.mean_ns, s.min_ns, s.max_ns, s.skew_median_ns,
                s.skew_max_ns);
  return line;
}

void print_table_header(std::FILE* out) {
  std::fprintf(out, "%-10s %9s %7s %7s %7s %12s %12s %14s\n", "op", "bytes", "meas", "invalid",
               "outlier", "median[us]", "mean[us]", "exit-skew[us]");
}

void print_table_row(std::FILE* out, const Summary& s) {
  std::fprintf(out, "%-10s %9zu %7zu %7zu %7zu %12.2f %12.2f %14.2f\n", s.op.c_str(), s.bytes,
               s.measurements, s.invalid, s.outliers, s.median_ns / 1e3, s.mean_ns / 1e3,
               s.skew_median_ns / 1e3);
}

namespace {

using Key = std::pair<std::string, std::size_t>; // op, bytes
using Samples = std::map<Key, std::vector<double>>;

// Reads the valid run-times of a --raw file, grouped by (op, bytes).
bool read_raw(const std::string& path, Samples& samples, std::string& sync, std::string& error) {
  std::ifstream in(path);
  if (!in) return error = std::strerror(errno), false;
  std::string line;
  if (!std::getline(in, line) || line != kRawHeader)
    return error =
               "not an htrace-bench --raw file (expected header '" + std::string(kRawHeader) + "')",
           false;
  for (long number = 2; std::getline(in, line); ++number) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string item; std::getline(fields, item, ',');)
      f.push_back(item);
    char* end = nullptr;
    if (f.size() != 7)
      return error = "line " + std::to_string(number) + ": expected 7 fields", false;
    const double runtime = std::strtod(f[4].c_str(), &end);
    if (*end != '\0' || f[4].empty())
      return error = "line " + std::to_string(number) + ": bad runtime_ns '" + f[4] + "'", false;
    sync = f[2];
    if (f[6] == "1") samples[{f[0], std::strtoull(f[1].c_str(), nullptr, 10)}].push_back(runtime);
  }
  return true;
}

} // namespace

int run_compare(const std::string& file_a, const std::string& file_b, const std::string& output) {
  const std::string files[2] = {file_a, file_b};
  Samples a, b;
  std::string sync_a, sync_b, error;
  for (int i = 0; i < 2; ++i) {
    if (!read_raw(files[i], i == 0 ? a : b, i == 0 ? sync_a : sync_b, error)) {
      std::fprintf(stderr, "htrace-bench: error: '%s': %s\n", files[i].c_str(), error.c_str());
      return 1;
    }
  }
  std::ostringstream csv;
  csv << "op,bytes,n_a,n_b,median_a_ns,median_b_ns,ratio_b_a,w,p_value,test\n";
  int common = 0;
  for (const auto& [key, samples_a] : a) {
    auto found = b.find(key);
    if (found == b.end()) continue;
    // The paper's procedure: outliers out first (Tukey), then the rank-sum test.
    const std::vector<double> x = stats::tukey_filter(samples_a).kept;
    const std::vector<double> y = stats::tukey_filter(found->second).kept;
    if (x.empty() || y.empty()) continue;
    ++common;
    const stats::RankSumResult test = stats::wilcoxon_rank_sum(x, y);
    const double ma = stats::median(x), mb = stats::median(y);
    char row[256];
    std::snprintf(row, sizeof row, "%s,%zu,%zu,%zu,%.0f,%.0f,%.4f,%.1f,%.4g,%s\n",
                  key.first.c_str(), key.second, x.size(), y.size(), ma, mb, mb / ma, test.w,
                  test.p_value, test.exact ? "exact" : "normal");
    csv << row;
  }
  if (common == 0) {
    std::fprintf(stderr,
                 "htrace-bench: error: '%s' and '%s' share no operation and size with "
                 "valid measurements\n",
                 files[0].c_str(), files[1].c_str());
    return 1;
  }
  if (output.empty()) {
    std::fputs(csv.str().c_str(), stdout);
  } else if (!write_file_atomically(output, csv.str(), error)) {
    std::fprintf(stderr, "htrace-bench: error: '%s': %s\n", output.c_str(), error.c_str());
    return 1;
  }
  return 0;
}

} // namespace htrace::bench
