// Balancing the trace at the end: libomp never reports the end of a worker's implicit task (and
// implicit barrier) for the last parallel region before MPI_Finalize, and a thread may still hold
// a lock. Open constructs are ended at the master's end of their parallel region when known.
// After HTRACE_BUDGET stopped recording, whatever was open at that cut (parallel regions
// included: the encountering thread's ThreadJoin) ends there.
#include "ompt/callbacks.h"
#include "ompt/parallel_instances.h"
#include "ompt/thread_state.h"

#include <algorithm>

namespace htrace::ompt {

namespace {

// When the construct at frames[index] ends: a worker's constructs end with the master's end of
// the parallel region (or, if that record is gone, at the worker's last event); the master's and
// those outside any parallel region end now.
record::LocalTime closing_time(const ThreadState& s, int index, record::LocalTime now) {
  for (int i = index; i >= 0; --i) {
    const Frame& f = s.frames[i];
    if (f.kind != FrameKind::ImplicitTask) continue;
    if (f.thread_num == 0) return now;
    record::LocalTime master_end = parallel_master_end(f.instance);
    if (master_end == 0) return s.last_time;
    return master_end < now ? master_end : now;
  }
  return now;
}

} // namespace

void close_thread(ThreadState& s, record::LocalTime now) {
  if (s.location == nullptr) return;
  if (s.held > 0) {
    record::LocalTime t = s.advance_to(closing_time(s, s.depth - 1, now));
    while (s.held > 0) {
      const HeldLock& l = s.locks[--s.held];
      s.location->thread_release_lock(t, l.lock, l.order);
    }
  }
  while (s.depth > 0) {
    const record::LocalTime t = s.advance_to(closing_time(s, s.depth - 1, now));
    Frame f;
    s.pop(s.frames[s.depth - 1].kind, f);
    s.location->leave(t, f.region);
    if (f.kind != FrameKind::ImplicitTask) continue;
    s.location->thread_team_end(t, f.team);
    // Thread 0 of a team forked it: the region ends here for it too (a cut by HTRACE_BUDGET, or
    // MPI_Finalize inside a parallel region).
    if (f.thread_num == 0 && s.open_forks > 0) {
      s.location->thread_join(t);
      --s.open_forks;
    }
  }
  // A fork whose team this thread never began (the cut came in between).
  for (; s.open_forks > 0; --s.open_forks)
    s.location->thread_join(s.advance_to(now));
}

void close_open_constructs() {
  // Stop recording first: from here on callbacks of other threads write nothing.
  g_tracing_closed.store(true, std::memory_order_seq_cst);
  record::LocalTime now = ThreadState::clock_now();
  if (record::budget_reached()) {
    // Constructs still open end at HTRACE_BUDGET's cut, not here; or right after the newest
    // event of the process's threads, if a call in progress at the cut ended later, so that every
    // member of a team ends before its master joins.
    now = record::budget_cut();
    for_each_thread([&now](ThreadState& s) {
      if (s.location != nullptr) now = std::max(now, s.location->newest_stamp());
    });
  }
  for_each_thread([now](ThreadState& s) {
    // Never before the location's newest event: an MPI call that was in progress at the cut, or
    // a worker's MPI call after its last OpenMP event, ends later than these constructs began.
    if (s.location != nullptr) s.advance_to(s.location->newest_stamp());
    close_thread(s, now);
  });
}

void stop_at_budget() {
  g_tracing_closed.store(true, std::memory_order_seq_cst);
}

} // namespace htrace::ompt
