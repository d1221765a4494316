#include "ompt/thread_state.h"

#include "clock/base_clock.h"
#include "common/log.h"
#include "ompt/parallel_instances.h"

#include <memory>
#include <mutex>
#include <vector>

namespace htrace::ompt {

std::atomic<bool> g_tracing_closed{false};

namespace {

// States are owned here, not by thread_local storage: a thread that exits before MPI_Finalize
// still has its open constructs closed by the finalize hook.
struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<ThreadState>> states;
};

Registry& registry() {
  static Registry* r = new Registry; // never destroyed: callbacks may run during exit
  return *r;
}

// initial-exec: one load from the thread pointer instead of a __tls_get_addr call per callback
// (libhtrace is preloaded or linked, never dlopen'ed late; 8 bytes of static TLS).
thread_local ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;

ThreadState* create_state() {
  auto state = std::make_unique<ThreadState>();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.states.push_back(std::move(state));
  return r.states.back().get();
}

} // namespace

record::LocalTime ThreadState::team_end_time(bool master, std::uint64_t instance, bool publish) {
  if (master) {
    const record::LocalTime t = stamp();
    if (publish) set_parallel_master_end(instance, t);
    return t;
  }
  record::LocalTime t = clock_now();
  const record::LocalTime master_end = parallel_master_end(instance);
  if (master_end != 0 && master_end < t) t = master_end;
  return advance_to(t);
}

Frame* ThreadState::push(FrameKind kind, record::RegionId region) {
  if (depth == kMaxDepth) {
    if (!overflow_reported)
      log::rank_warning(
          "OpenMP constructs nested deeper than %d on one thread; deeper ones are not recorded",
          kMaxDepth);
    overflow_reported = true;
    return nullptr;
  }
  Frame& f = frames[depth++];
  f.kind = kind;
  f.region = region;
  f.instance = 0;
  f.team = record::kNoComm;
  f.thread_num = 0;
  f.outer_task_frame = task_frame;
  if (kind == FrameKind::ImplicitTask) task_frame = depth - 1;
  return &f;
}

bool ThreadState::pop(FrameKind kind, Frame& popped) {
  if (depth == 0 || frames[depth - 1].kind != kind) return false;
  popped = frames[--depth];
  if (kind == FrameKind::ImplicitTask) task_frame = popped.outer_task_frame;
  return true;
}

ThreadState* current_thread() {
  ThreadState* s = t_state;
  if (__builtin_expect(s == nullptr, 0)) s = t_state = create_state();
  if (g_tracing_closed.load(std::memory_order_relaxed)) return nullptr;
  if (__builtin_expect(s->location == nullptr, 0)) {
    // Before MPI_Init (or with tracing off) the recorder has no location yet: record nothing.
    s->location = record::thread();
    if (s->location == nullptr) return nullptr;
  }
  return s;
}

void for_each_thread_impl(void (*fn)(ThreadState&, void*), void* context) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& s : r.states)
    fn(*s, context);
}

} // namespace htrace::ompt
