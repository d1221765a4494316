// Locks, nest locks and critical sections: AcquireLock/ReleaseLock with a lock id and the lock's
// acquisition order, plus the waiting time (omp_set_lock) or the critical section as a region.
#include "ompt/callbacks.h"
#include "ompt/lock_table.h"
#include "ompt/region_names.h"
#include "ompt/thread_state.h"

namespace htrace::ompt {

namespace {

bool is_lock_kind(ompt_mutex_t kind) {
  return kind == ompt_mutex_lock || kind == ompt_mutex_test_lock || kind == ompt_mutex_nest_lock ||
         kind == ompt_mutex_test_nest_lock || kind == ompt_mutex_critical;
}

void end_lock_wait(ThreadState& s, record::LocalTime t) {
  Frame f;
  if (s.pop(FrameKind::LockWait, f)) s.location->leave(t, f.region);
}

} // namespace

void on_mutex_acquire(ompt_mutex_t kind, unsigned int, unsigned int, ompt_wait_id_t,
                      const void* codeptr) {
  // omp_test_[nest_]lock may fail without a further callback: no region for those.
  FrameKind frame_kind = FrameKind::LockWait;
  Construct c;
  switch (kind) {
  case ompt_mutex_lock:
    c = Construct::SetLock;
    break;
  case ompt_mutex_nest_lock:
    c = Construct::SetNestLock;
    break;
  case ompt_mutex_critical:
    c = Construct::Critical;
    frame_kind = FrameKind::Region; // stays open until the critical section is left
    break;
  case ompt_mutex_ordered:
    c = Construct::Ordered;
    frame_kind = FrameKind::Region;
    break;
  default:
    return;
  }
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  record::RegionId region = s->region(c, codeptr);
  if (s->push(frame_kind, region) == nullptr) return;
  s->location->enter(s->stamp(), region);
}

void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void*) {
  if (!is_lock_kind(kind)) return;
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  // The lock is held now: advancing its counter here makes the orders follow the acquisitions.
  LockEntry& e = lock_entry(wait_id);
  std::uint32_t order = e.order.fetch_add(1, std::memory_order_relaxed) + 1;
  std::uint32_t lock = e.id.load(std::memory_order_relaxed);
  record::LocalTime t = s->stamp();
  end_lock_wait(*s, t);
  s->location->thread_acquire_lock(t, lock, order);
  if (s->held < kMaxHeldLocks) s->locks[s->held++] = HeldLock{wait_id, lock, order};
}

void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void*) {
  if (!is_lock_kind(kind) && kind != ompt_mutex_ordered) return;
  ThreadState* s = current_thread();
  if (s == nullptr) return;
  record::LocalTime t = s->stamp();
  // The runtime may already have handed the lock on: use the order remembered at acquisition.
  for (int i = s->held - 1; i >= 0; --i) {
    if (s->locks[i].wait_id != wait_id) continue;
    s->location->thread_release_lock(t, s->locks[i].lock, s->locks[i].order);
    for (int j = i; j + 1 < s->held; ++j)
      s->locks[j] = s->locks[j + 1];
    --s->held;
    break;
  }
  if (kind == ompt_mutex_critical || kind == ompt_mutex_ordered) {
    Frame f;
    if (s->pop(FrameKind::Region, f)) s->location->leave(t, f.region);
  }
}

void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t, const void*) {
  // A nested (re-)acquisition of a nest lock the thread owns: only the wait region ends.
  if (endpoint != ompt_scope_begin) return;
  if (ThreadState* s = current_thread()) end_lock_wait(*s, s->stamp());
}

} // namespace htrace::ompt
