// synchronize(): the MPI entry point used by the tools (htrace-clockcheck, htrace-bench).
#include "clock/sync.h"

#include "clock/accuracy.h"
#include "clock/base_clock.h"
#include "clock/mpi_transport.h"

namespace htrace::clock {

SyncOutcome synchronize(MPI_Comm comm, const std::string& config) {
  SyncOutcome out;
  const SyncConfigResult parsed = parse_sync_config(config);
  if (!parsed.ok()) {
    out.error = parsed.error;
    return out;
  }
  MpiTransport t(comm);
  const SyncRun run = synchronize_on(t, parsed.config, [] { return now(); });
  out.map = run.clock.to_time_map(now());
  out.duration_s = static_cast<double>(run.duration_ns) * 1e-9;
  out.ok = true;
  return out;
}

std::int64_t global_now(const GlobalTimeMap& map) {
  return map.to_global(now());
}

} // namespace htrace::clock
