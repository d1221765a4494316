// MPI_Pcontrol (table skeleton "special": the C function is variadic). Level 0 switches recording
// off for the calling process, any other level back on; each switch is an OTF2 MeasurementOnOff
// record inside the MPI_Pcontrol region on the calling thread's location, so readers and
// htrace-correct see the gap. While off, the wrappers count the calls they pass through (summary
// at MPI_Finalize). HTRACE_BUDGET switches recording off for good through the same flag: no level
// switches it back on.
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
    resume_tracing();
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

// The budget hook runs inside a buffer conversion, possibly on a thread inside MPI_Pcontrol
// (holding g_switch): it takes no lock. It stores budget_spent before tracing and resume_tracing()
// the other way round, sequentially consistent, so a resume racing with it either sees
// budget_spent or has its tracing = true overwritten by the hook's false. (Between resume's two
// stores another thread may begin one recorded call: within the documented overshoot.)
void stop_tracing_at_budget() {
  g_wrappers.budget_spent.store(true, std::memory_order_seq_cst);
  g_wrappers.tracing.store(false, std::memory_order_seq_cst);
}

void resume_tracing() {
  if (g_wrappers.budget_spent.load(std::memory_order_seq_cst)) return;
  g_wrappers.tracing.store(true, std::memory_order_seq_cst);
  if (g_wrappers.budget_spent.load(std::memory_order_seq_cst))
    g_wrappers.tracing.store(false, std::memory_order_seq_cst);
}

} // namespace htrace::mpi

// Only the level has a meaning in MPI; further (implementation-specific) arguments are ignored,
// as Open MPI's PMPI_Pcontrol ignores them.
HTRACE_ENTRY_POINT int MPI_Pcontrol(const int level, ...) {
  htrace::mpi::pcontrol(level);
  return PMPI_Pcontrol(level);
}
