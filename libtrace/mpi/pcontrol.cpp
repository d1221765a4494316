// MPI_Pcontrol (table skeleton "special": the C function is variadic). Level 0 switches recording
// off for the calling process, any other level back on; each switch is an OTF2 MeasurementOnOff
// record inside the MPI_Pcontrol region on the calling thread's location, so readers and
// htrace-correct see the gap. While off, the wrappers count the calls they pass through (summary
// at MPI_Finalize).
#include "mpi/entry_point.h"
#include "mpi/wrapper_call.h"

#include <mpi.h>
#include <mutex>

namespace htrace::mpi {
namespace {

std::mutex g_switch; // serializes Pcontrol calls of several threads

void pcontrol(int level) {
  if (t_inside_mpi) return;
  const std::lock_guard<std::mutex> lock(g_switch);
  const bool on = g_wrappers.tracing.load(std::memory_order_acquire);
  const bool paused = g_wrappers.paused.load(std::memory_order_relaxed);
  if (level != 0 && !on && paused) { // back on: the region is recorded again from its Enter
    g_wrappers.paused.store(false, std::memory_order_relaxed);
    g_wrappers.tracing.store(true, std::memory_order_release);
  }
  Call call(FunctionId::Pcontrol);
  if (!call.traced()) return; // tracing off for the run, or still paused (counted)
  const record::LocalTime t = call.completed();
  if (level == 0) {
    call.location().measurement_on_off(t, false);
    g_wrappers.paused.store(true, std::memory_order_relaxed);
    g_wrappers.tracing.store(false, std::memory_order_release);
  } else if (!on) {
    call.location().measurement_on_off(t, true);
  }
}

} // namespace
} // namespace htrace::mpi

// Only the level has a meaning in MPI; further (implementation-specific) arguments are ignored,
// as Open MPI's PMPI_Pcontrol ignores them.
HTRACE_ENTRY_POINT int MPI_Pcontrol(const int level, ...) {
  htrace::mpi::pcontrol(level);
  return PMPI_Pcontrol(level);
}
