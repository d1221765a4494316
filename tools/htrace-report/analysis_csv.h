// The analysis of --format json as CSV, one figure a row, for scripts:
//   archive,section,scope,key,split,item,value
// archive: "archive", "before" (--before) or "comparison"; section: "wait_states" or
// "efficiency" ("headline" for comparison rows); scope: "run" or "window"; key: the pattern or
// the metric; split and item: where the figure sits in the JSON (a split's location index,
// region or communicator). Times in integer ns; undefined metrics are empty. Comparison rows
// name the wait-state figures that changed (value: appears, vanishes, grows, shrinks) and give
// each headline figure before, after and whether it differs materially.
#pragma once

#include "wait_states_json.h"

#include <ostream>

namespace htrace::report {

void write_csv_report(std::ostream& out, const ArchiveDefs& defs, const RunAnalysis& a,
                      const BeforeAnalysis* before = nullptr);

} // namespace htrace::report
