// A do-nothing OMPT tool registering the same callbacks as htrace: its cost is libomp's own price
// for dispatching OMPT events, which no tool can avoid. bench/ompt/run.sh preloads it as a
// baseline.
#include <omp-tools.h>

namespace {

void ignore() {}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  const ompt_callbacks_t events[] = {
      ompt_callback_thread_begin,   ompt_callback_thread_end,     ompt_callback_parallel_begin,
      ompt_callback_parallel_end,   ompt_callback_implicit_task,  ompt_callback_sync_region,
      ompt_callback_work,           ompt_callback_masked,         ompt_callback_mutex_acquire,
      ompt_callback_mutex_acquired, ompt_callback_mutex_released, ompt_callback_nest_lock,
      ompt_callback_task_create,    ompt_callback_task_schedule};
  for (ompt_callbacks_t event : events)
    set_callback(event, reinterpret_cast<ompt_callback_t>(&ignore));
  return 1;
}

void finalize(ompt_data_t*) {}

} // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
  static ompt_start_tool_result_t result{&initialize, &finalize, ompt_data_t{}};
  return &result;
}
