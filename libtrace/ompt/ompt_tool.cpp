// The OMPT entry point: LLVM's libomp calls ompt_start_tool in any loaded library (libhtrace.so is
// preloaded) when it initializes. htrace registers its callbacks unless HTRACE_ENABLE=0 or
// HTRACE_OMPT=0.
#include "common/log.h"
#include "common/options.h"
#include "ompt/callbacks.h"
#include "record/recorder.h"

#include <omp-tools.h>

namespace htrace::ompt {

namespace {

struct Registration {
  ompt_callbacks_t event;
  ompt_callback_t callback;
  const char* name;
};

#define HTRACE_OMPT_CALLBACK(event, fn)                                                            \
  { event, reinterpret_cast<ompt_callback_t>(&fn), #event }

const Registration kRegistrations[] = {
    HTRACE_OMPT_CALLBACK(ompt_callback_thread_begin, on_thread_begin),
    HTRACE_OMPT_CALLBACK(ompt_callback_thread_end, on_thread_end),
    HTRACE_OMPT_CALLBACK(ompt_callback_parallel_begin, on_parallel_begin),
    HTRACE_OMPT_CALLBACK(ompt_callback_parallel_end, on_parallel_end),
    HTRACE_OMPT_CALLBACK(ompt_callback_implicit_task, on_implicit_task),
    HTRACE_OMPT_CALLBACK(ompt_callback_sync_region, on_sync_region),
    HTRACE_OMPT_CALLBACK(ompt_callback_work, on_work),
    HTRACE_OMPT_CALLBACK(ompt_callback_masked, on_masked),
    HTRACE_OMPT_CALLBACK(ompt_callback_mutex_acquire, on_mutex_acquire),
    HTRACE_OMPT_CALLBACK(ompt_callback_mutex_acquired, on_mutex_acquired),
    HTRACE_OMPT_CALLBACK(ompt_callback_mutex_released, on_mutex_released),
    HTRACE_OMPT_CALLBACK(ompt_callback_nest_lock, on_nest_lock),
    HTRACE_OMPT_CALLBACK(ompt_callback_task_create, on_task_create),
    HTRACE_OMPT_CALLBACK(ompt_callback_task_schedule, on_task_schedule),
};

#undef HTRACE_OMPT_CALLBACK

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) {
    log::warning("OpenMP runtime offers no ompt_set_callback; OpenMP events are not recorded");
    return 0;
  }
  for (const Registration& r : kRegistrations) {
    ompt_set_result_t result = set_callback(r.event, r.callback);
    if (result != ompt_set_always)
      log::debug("OMPT: %s registered with result %d (not 'always'): some events may be missing",
                 r.name, static_cast<int>(result));
  }
  record::add_finalize_hook(&close_open_constructs);
  record::add_budget_hook(&stop_at_budget);
  return 1; // keep the tool active
}

void finalize(ompt_data_t*) {
  // libomp shuts down after MPI_Finalize: everything was closed by the recorder's finalize hook.
}

} // namespace

} // namespace htrace::ompt

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t*
ompt_start_tool(unsigned int omp_version, const char* runtime_version) {
  using namespace htrace;
  // The process's one parse; with a bad value it has tracing off (MPI_Init reports it).
  const Options& options = run_options().options;
  if (!options.enable || !options.ompt) return nullptr;
  log::debug("OMPT tool active (OpenMP %u, %s)", omp_version,
             runtime_version ? runtime_version : "?");
  static ompt_start_tool_result_t result{&ompt::initialize, &ompt::finalize, ompt_data_t{}};
  return &result;
}
