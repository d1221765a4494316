// The analysis of an archive as JSON: its wait states (one object per pattern with its total, its
// calls, its longest wait and its splits by waiting location, by the location waited for, by
// region and by communicator, all in integer ns) and its efficiency metrics (the run's and the
// window's). --format json writes the whole document; the HTML report embeds the same objects.
#pragma once

#include "analysis_compare.h"
#include "archive_defs.h"
#include "wait_state_sink.h"

#include <cstddef>
#include <ostream>
#include <set>

namespace htrace::report {

/// How much per location a document holds: every location (top == 0: per-location figures as
/// arrays by location index), or, for a page that cannot show them all, the `top` locations with
/// the largest figures (objects keyed by location index). `referenced` collects the locations
/// named.
struct PerLocation {
  std::size_t top = 0;
  std::set<std::uint32_t>* referenced = nullptr;
};

void write_wait_states(std::ostream& out, const ArchiveDefs& defs,
                       const analysis::WaitStates& waits, const PerLocation& per = {});

/// {"run":{...},"window":{...}|null}: the metrics (null where undefined), their inputs in ns and
/// (unless per.top) each location's useful, MPI and waiting time.
void write_efficiency(std::ostream& out, const RunAnalysis& a, const PerLocation& per = {});

/// {"headline":[...],"wait_states":[...]} of compare(); with per.top, at most 10 * per.top
/// wait-state changes (and "wait_states_total", their number).
void write_comparison(std::ostream& out, const Comparison& c, const PerLocation& per = {});

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
