// An archive's analysis beside the analysis of the archive it was corrected from (--before):
// which wait states the correction makes appear, vanish, grow or shrink, and whether the
// headline figures (total waiting time, the efficiency metrics) differ materially.
#pragma once

#include "wait_state_sink.h"

#include <string>
#include <vector>

namespace htrace::report {

/// A wait-state figure that differs materially: at least kMaterialWaitNs and at least
/// kMaterialWaitShare of the larger of the two.
constexpr std::int64_t kMaterialWaitNs = 1000;
constexpr double kMaterialWaitShare = 0.1;
/// An efficiency metric that differs materially: by at least this much (1 percentage point).
constexpr double kMaterialEfficiency = 0.01;

struct WaitChange {
  std::string pattern; ///< "late_sender", ...
  std::string split;   ///< "total_ns", "by_location", "caused_by", "by_region", "by_comm"
  std::string item;    ///< location index, region or communicator name; "" for total_ns
  std::int64_t before = 0, after = 0;
  const char* change = ""; ///< "appears" (0 before), "vanishes" (0 after), "grows", "shrinks"
};

struct HeadlineFigure {
  std::string figure; ///< "total_waiting_ns", "parallel_efficiency", ...
  std::string scope;  ///< "run" or "window"
  double before = 0, after = 0;
  bool material = false;
};

struct Comparison {
  std::vector<WaitChange> waits;        ///< only the material ones, by pattern and split
  std::vector<HeadlineFigure> headline; ///< all of them
};

/// Regions and communicators are compared by name, locations by index (an archive and its
/// corrected copy have the same locations).
Comparison compare(const ArchiveDefs& before_defs, const RunAnalysis& before,
                   const ArchiveDefs& after_defs, const RunAnalysis& after);

/// The efficiency metrics' keys and values, in the order the report shows them.
std::vector<std::pair<const char*, double>> efficiency_metrics(const analysis::Efficiency& e);

/// A region's and a communicator's name as the reports show them.
std::string region_name(const ArchiveDefs& defs, std::uint32_t region);
std::string comm_name(const ArchiveDefs& defs, std::uint32_t comm);

} // namespace htrace::report
