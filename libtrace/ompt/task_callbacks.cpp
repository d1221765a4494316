// Explicit tasks: TaskCreate on the creating thread, TaskSwitch whenever a thread starts or
// resumes a task (including back to its implicit task), TaskComplete when a task finishes.
// Tasks outside any parallel region run on the initial thread alone and are not recorded.
#include "ompt/callbacks.h"
#include "ompt/task_identity.h"
#include "ompt/thread_state.h"

namespace htrace::ompt {

void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t* new_task, int flags, int,
                    const void*) {
  new_task->value = 0;
  if ((flags & ompt_task_explicit) == 0) return;
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  const Frame* task = s->team_frame();
  if (task == nullptr) return;
  std::uint64_t generation = s->next_task_generation++;
  new_task->value = task_identity(task->thread_num, generation);
  s->location->thread_task_create(s->stamp(), task->team, task->thread_num,
                                  task_generation(new_task->value));
}

void on_task_schedule(ompt_data_t* prior_task, ompt_task_status_t prior_status,
                      ompt_data_t* next_task) {
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  const Frame* task = s->team_frame();
  if (task == nullptr) return;
  record::LocalTime t = s->stamp();
  bool finished = prior_status == ompt_task_complete || prior_status == ompt_task_cancel ||
                  prior_status == ompt_task_late_fulfill;
  if (finished && prior_task != nullptr && task_identity_valid(prior_task->value) &&
      task_generation(prior_task->value) != 0)
    s->location->thread_task_complete(t, task->team, task_creating_thread(prior_task->value),
                                      task_generation(prior_task->value));
  if (next_task != nullptr && task_identity_valid(next_task->value))
    s->location->thread_task_switch(t, task->team, task_creating_thread(next_task->value),
                                    task_generation(next_task->value));
}

} // namespace htrace::ompt
