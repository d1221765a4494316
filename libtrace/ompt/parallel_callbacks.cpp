// Threads, parallel regions and implicit tasks: fork/join on the encountering thread, team
// membership, TeamBegin/End and the parallel region's Enter/Leave on every member.
#include "ompt/callbacks.h"
#include "ompt/parallel_instances.h"
#include "ompt/region_names.h"
#include "ompt/task_identity.h"
#include "ompt/thread_state.h"

namespace htrace::ompt {

void on_thread_begin(ompt_thread_t, ompt_data_t*) {
  // Creates the thread's state and location early, so locations appear in thread start order.
  current_thread();
}

void on_thread_end(ompt_data_t*) {
  if (ThreadState* s = current_thread()) close_thread(*s, s->clock_now());
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t* parallel_data,
                       unsigned int requested_parallelism, int, const void* codeptr) {
  parallel_data->value = 0;
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  record::LocalTime t = s->stamp();
  record::RegionId region = s->region(Construct::Parallel, codeptr);
  const Frame* outer = s->team_frame();
  s->location->thread_fork(t, requested_parallelism);
  ++s->open_forks;
  TeamMembers* members = nullptr;
  record::CommId team = outer ? record::register_thread_team(outer->team, requested_parallelism)
                              : s->teams.team_for(requested_parallelism, members);
  parallel_data->value = begin_parallel_instance(team, members, region, codeptr);
}

void on_parallel_end(ompt_data_t* parallel_data, ompt_data_t*, int, const void*) {
  ThreadState* s = current_thread();
  if (s == nullptr || parallel_data == nullptr || parallel_data->value == 0) return;
  record::LocalTime t = s->stamp();
  set_parallel_master_end(parallel_data->value, t); // if no implicit barrier was reported
  s->location->thread_join(t);
  if (s->open_forks > 0) --s->open_forks;
}

namespace {

void begin_implicit_task(ThreadState& s, ompt_data_t* parallel_data, ompt_data_t* task_data,
                         unsigned int index) {
  std::uint64_t serial = parallel_data ? parallel_data->value : 0;
  ParallelInstance* p = serial ? find_parallel_instance(serial) : nullptr;
  if (p == nullptr) return; // the region began before tracing started
  record::CommId team = p->team.load(std::memory_order_relaxed);
  record::RegionId region = p->region.load(std::memory_order_relaxed);
  Frame* f = s.push(FrameKind::ImplicitTask, region);
  if (f == nullptr) return;
  f->instance = serial;
  f->team = team;
  f->thread_num = index;
  task_data->value = task_identity(index, 0);
  if (TeamMembers* members = p->members.load(std::memory_order_relaxed))
    join_cached_team(*members, team, index, s.location->id());
  else
    record::add_team_member(team, index, s.location->id());
  record::LocalTime t = s.stamp();
  s.location->thread_team_begin(t, team);
  s.location->enter(t, region);
}

void end_implicit_task(ThreadState& s) {
  if (s.task_frame < 0) return;
  const Frame& task = s.frames[s.task_frame];
  const record::LocalTime t = s.team_end_time(task.thread_num == 0, task.instance, true);
  // Constructs the runtime left open inside the implicit task end with it.
  Frame f;
  while (s.depth > s.task_frame + 1 && s.pop(s.frames[s.depth - 1].kind, f))
    s.location->leave(t, f.region);
  if (s.pop(FrameKind::ImplicitTask, f)) {
    s.location->leave(t, f.region);
    s.location->thread_team_end(t, f.team);
  }
}

} // namespace

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                      ompt_data_t* task_data, unsigned int, unsigned int index, int flags) {
  if (flags & ompt_task_initial)
    return; // the initial task is the program itself, not a parallel region
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  if (endpoint == ompt_scope_begin)
    begin_implicit_task(*s, parallel_data, task_data, index);
  else
    end_implicit_task(*s);
}

} // namespace htrace::ompt
