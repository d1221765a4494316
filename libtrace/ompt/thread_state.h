// Per-thread state of the OMPT tool: the location, the stack of open constructs, held locks.
// Hot path: every callback reaches its state through one thread_local pointer; nothing allocates
// after a thread's first event.
#pragma once

#include "clock/base_clock.h"
#include "ompt/region_names.h"
#include "ompt/team_cache.h"
#include "record/recorder.h"

#include <atomic>
#include <cstdint>

namespace htrace::ompt {

enum class FrameKind : std::uint8_t {
  ImplicitTask, ///< a member's part of a parallel region: TeamBegin + Enter ... Leave + TeamEnd
  Region,       ///< any other construct recorded as Enter ... Leave
  LockWait      ///< omp_set_[nest_]lock until the lock is acquired
};

struct Frame {
  FrameKind kind;
  record::RegionId region;
  std::uint64_t instance; ///< parallel-region instance serial (ImplicitTask frames)
  record::CommId team;    ///< ImplicitTask frames: the team
  std::uint32_t thread_num;
  int outer_task_frame; ///< index of the enclosing ImplicitTask frame, -1 if none
};

struct HeldLock {
  std::uint64_t wait_id;
  std::uint32_t lock;
  std::uint32_t order;
};

constexpr int kMaxDepth = 64;
constexpr int kMaxHeldLocks = 32;

struct ThreadState {
  record::Location* location = nullptr;
  record::LocalTime last_time = 0;
  int depth = 0;
  int task_frame = -1; ///< innermost ImplicitTask frame: the thread's current team
  Frame frames[kMaxDepth];
  int held = 0;
  HeldLock locks[kMaxHeldLocks];
  std::uint64_t next_task_generation = 1; ///< 0 names the implicit task
  int open_forks = 0; ///< ThreadFork records of this thread still without their ThreadJoin
  bool overflow_reported = false;
  RegionCache regions;
  TeamCache teams; ///< outermost teams this thread forked

  record::RegionId region(Construct c, const void* codeptr) {
    return region_for(regions, c, codeptr);
  }

  /// Timestamp for the next event: the base clock, never before the previous event.
  record::LocalTime stamp() { return advance_to(clock_now()); }
  record::LocalTime advance_to(record::LocalTime t) {
    if (t < last_time) t = last_time;
    last_time = t;
    return t;
  }
  static record::LocalTime clock_now() { return clock::stamp(); } // inline: once per event
  /// Time of an end that closes parallel instance `instance` on this thread. The master stamps it
  /// (and publishes it as the instance's end if `publish`); a worker reports such ends late (when
  /// released for its next region), so its time is bounded by the master's end.
  record::LocalTime team_end_time(bool master, std::uint64_t instance, bool publish);

  const Frame* team_frame() const { return task_frame >= 0 ? &frames[task_frame] : nullptr; }
  Frame* push(FrameKind kind, record::RegionId region);
  /// Pops the top frame if it has `kind`; false (nothing popped) if the stack disagrees.
  bool pop(FrameKind kind, Frame& popped);
};

/// True once the recorder's finalize has started: later callbacks record nothing.
extern std::atomic<bool> g_tracing_closed;

/// The calling thread's state if it should record now (tracing active, location available),
/// else nullptr. Creates the state on a thread's first call.
ThreadState* current_thread();

/// Ends the thread's open constructs and releases its held locks at `now`, or for a worker of a
/// finished parallel region at the master's end of that region (never before its last event).
void close_thread(ThreadState& s, record::LocalTime now);

/// Visits every thread state ever created (finalize only; other threads must be quiescent).
template <typename Fn> void for_each_thread(Fn&& fn);
void for_each_thread_impl(void (*fn)(ThreadState&, void*), void* context);
template <typename Fn> void for_each_thread(Fn&& fn) {
  for_each_thread_impl([](ThreadState& s, void* c) { (*static_cast<Fn*>(c))(s); }, &fn);
}

} // namespace htrace::ompt
