// Barriers, taskwait/taskgroup, worksharing constructs and masked regions: Enter/Leave pairs.
#include "ompt/callbacks.h"
#include "ompt/parallel_instances.h"
#include "ompt/region_names.h"
#include "ompt/thread_state.h"

namespace htrace::ompt {

namespace {

void enter_construct(ThreadState& s, Construct c, const void* codeptr) {
  record::RegionId region = s.region(c, codeptr);
  if (s.push(FrameKind::Region, region) == nullptr) return;
  s.location->enter(s.stamp(), region);
}

void leave_construct(ThreadState& s) {
  Frame f;
  if (!s.pop(FrameKind::Region, f)) return;
  s.location->leave(s.stamp(), f.region);
}

// The end of an implicit barrier. libomp 14 reports every implicit barrier as barrier_implicit
// and marks the one ending a parallel region only by a NULL parallel_data at its end. On the master
// that barrier's end is the region's end; workers report it late (when released for their next
// region), so a worker's implicit barrier ends no later than the master's end of the region (a
// workshare barrier ends before the master can finish the region, so the bound never applies).
void leave_implicit_barrier(ThreadState& s, bool ends_parallel) {
  Frame f;
  if (s.depth == 0 || s.frames[s.depth - 1].kind != FrameKind::Region) return;
  const Frame* task = s.team_frame();
  const record::LocalTime t =
      task == nullptr ? s.stamp()
                      : s.team_end_time(task->thread_num == 0, task->instance, ends_parallel);
  s.pop(FrameKind::Region, f);
  s.location->leave(t, f.region);
}

// Workers get no codeptr for the barrier ending the region; all members name it after the region.
const void* barrier_codeptr(const ThreadState& s, const void* codeptr) {
  if (const Frame* task = s.team_frame())
    if (ParallelInstance* p = find_parallel_instance(task->instance)) {
      const void* region = p->codeptr.load(std::memory_order_relaxed);
      if (codeptr == nullptr || codeptr == region) return region;
    }
  return codeptr;
}

} // namespace

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                    ompt_data_t* parallel_data, ompt_data_t*, const void* codeptr) {
  Construct c;
  switch (kind) {
  case ompt_sync_region_barrier_explicit:
    c = Construct::Barrier;
    break;
  case ompt_sync_region_barrier_implicit_parallel:
  case ompt_sync_region_barrier:
  case ompt_sync_region_barrier_implicit:
  case ompt_sync_region_barrier_implicit_workshare:
  case ompt_sync_region_barrier_implementation:
  case ompt_sync_region_barrier_teams:
    c = Construct::ImplicitBarrier;
    break;
  case ompt_sync_region_taskwait:
    c = Construct::Taskwait;
    break;
  case ompt_sync_region_taskgroup:
    c = Construct::Taskgroup;
    break;
  default:
    return; // reductions: inside other constructs, no ordering of their own
  }
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  bool implicit = c == Construct::ImplicitBarrier;
  if (endpoint == ompt_scope_begin)
    enter_construct(*s, c, implicit ? barrier_codeptr(*s, codeptr) : codeptr);
  else if (implicit)
    leave_implicit_barrier(*s, kind == ompt_sync_region_barrier_implicit_parallel ||
                                   parallel_data == nullptr);
  else
    leave_construct(*s);
}

void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, uint64_t,
             const void* codeptr) {
  Construct c;
  switch (type) {
  case ompt_work_loop:
    c = Construct::Loop;
    break;
  case ompt_work_sections:
    c = Construct::Sections;
    break;
  case ompt_work_single_executor:
  case ompt_work_single_other:
    c = Construct::Single;
    break;
  case ompt_work_workshare:
    c = Construct::Workshare;
    break;
  case ompt_work_distribute:
    c = Construct::Distribute;
    break;
  case ompt_work_taskloop:
    c = Construct::Taskloop;
    break;
  default:
    c = Construct::Scope;
    break;
  }
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  if (endpoint == ompt_scope_begin)
    enter_construct(*s, c, codeptr);
  else
    leave_construct(*s);
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, const void* codeptr) {
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  if (endpoint == ompt_scope_begin)
    enter_construct(*s, Construct::Masked, codeptr);
  else
    leave_construct(*s);
}

} // namespace htrace::ompt
