// The analysis of an archive as JSON: its wait states (one object per pattern with its total, its
// calls, its longest wait and its splits by waiting location, by the location waited for, by
// region and by communicator, all in integer ns) and its efficiency metrics (the run's and the
// window's). --format json writes the whole document; the HTML report embeds the same objects.
#pragma once

#include "analysis_compare.h"
#include "archive_defs.h"
#include "wait_state_sink.h"

#include <ostream>

namespace htrace::report {

void write_wait_states(std::ostream& out, const ArchiveDefs& defs,
                       const analysis::WaitStates& waits);

/// {"run":{...},"window":{...}|null}: the metrics (null where undefined), their inputs in ns and
/// each location's useful, MPI and waiting time.
void write_efficiency(std::ostream& out, const RunAnalysis& a);

/// {"headline":[...],"wait_states":[...]} of compare().
void write_comparison(std::ostream& out, const Comparison& c);

/// A double as JSON: shortest text that reads back to the same value; null if not finite.
void write_number(std::ostream& out, double v);

/// An analysis as it was before correction (--before) and what changed.
struct BeforeAnalysis {
  std::string archive;
  const ArchiveDefs* defs = nullptr;
  const RunAnalysis* analysis = nullptr;
  const Comparison* comparison = nullptr;
};

/// The whole --format json document: the archive, its locations, its wait states and efficiency,
/// and with --before the same of the archive before correction and their comparison.
void write_json_report(std::ostream& out, const std::string& archive, std::uint64_t events,
                       const ArchiveDefs& defs, const RunAnalysis& a,
                       const BeforeAnalysis* before = nullptr);

} // namespace htrace::report
