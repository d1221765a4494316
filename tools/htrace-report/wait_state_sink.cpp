#include "wait_state_sink.h"

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

} // namespace htrace::report
