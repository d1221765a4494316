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

std::optional<analysis::TimeWindow> efficiency_window(const ArchiveDefs& defs,
                                                      std::int64_t begin_ns, std::int64_t end_ns,
                                                      std::string& from) {
  if (begin_ns >= 0) {
    from = "--window";
    return analysis::TimeWindow{begin_ns, end_ns};
  }
  analysis::TimeWindow w;
  if (!init_finalize_window(defs, w.begin_ns, w.end_ns)) {
    from.clear();
    return std::nullopt;
  }
  from = "MPI_Init..MPI_Finalize";
  return w;
}

} // namespace htrace::report
