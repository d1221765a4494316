#include "wait_state_sink.h"

#include "profile.h"

namespace htrace::report {

analysis::RunLayout run_layout(const ArchiveDefs& defs) {
  analysis::RunLayout l;
  for (const Location& loc : defs.locations)
    l.process_of.push_back(loc.process);
  for (const auto& [ref, comm] : defs.comms)
    l.comm_members[ref] = comm.members;
  l.regions = defs.regions;
  return l;
}

EfficiencyWindow efficiency_window(const ArchiveDefs& defs, std::int64_t begin_ns,
                                   std::int64_t end_ns) {
  if (begin_ns >= 0) return {analysis::TimeWindow{begin_ns, end_ns}, "--window"};
  analysis::TimeWindow w;
  if (!init_finalize_window(defs, w.begin_ns, w.end_ns)) return {};
  return {w, "MPI_Init..MPI_Finalize"};
}

} // namespace htrace::report
