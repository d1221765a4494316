// The frame every generated MPI wrapper runs in: re-entrancy guard, enabled check, Enter at
// construction and Leave at destruction. Hot path: inline, no allocation, two predictable branches.
// Polls (MPI_Test*, MPI_Iprobe, MPI_Improbe) enter only once their outcome is known: an
// unsuccessful one joins the run of polls just before it (record::Location::extend_poll_run).
#pragma once

#include "clock/base_clock.h"
#include "mpi/function_ids.gen.h"
#include "mpi/handles.h"
#include "mpi/untraced.h"
#include "record/recorder.h"

#include <atomic>
#include <mpi.h>

namespace htrace::mpi {

/// Process-wide wrapper state: whether events are recorded and the region id of every function
/// (registered once in MPI_Init).
struct WrapperState {
  std::atomic<bool> tracing{false};
  std::atomic<bool> paused{false}; ///< MPI_Pcontrol(0): calls are counted, not recorded
  /// HTRACE_BUDGET reached: calls are counted, not recorded, for the rest of the run.
  std::atomic<bool> budget_spent{false};
  std::atomic<bool> poll_runs{true}; ///< HTRACE_POLL_RUNS: unsuccessful polls fold into runs
  record::RegionId regions[kFunctionCount] = {};
};
/// Set in the region id of a function HTRACE_MPI_EXCLUDE excludes (no extra load on the hot path).
constexpr record::RegionId kExcludedRegionBit = 0x80000000u;
inline WrapperState g_wrappers;

/// True while this thread is inside a traced MPI call: MPI calls the MPI library (ROMIO, the
/// Fortran bindings' C helpers) makes on its own behalf are then passed through unrecorded.
inline thread_local bool t_inside_mpi __attribute__((tls_model("initial-exec"))) = false;

class Call {
public:
  /// `may_reveal`: the wrapper asks record_if() after the PMPI call (completions, probes found),
  /// so an excluded call that completes something is still recorded. `poll`: the wrapper asks
  /// record_poll() after the PMPI call, and Enter waits for it.
  explicit Call(FunctionId fn, bool may_reveal = false, bool poll = false) noexcept {
    if (t_inside_mpi) return;
    if (!g_wrappers.tracing.load(std::memory_order_relaxed)) {
      if (g_wrappers.budget_spent.load(std::memory_order_relaxed))
        note_untraced(fn, Untraced::Budget);
      else if (g_wrappers.paused.load(std::memory_order_relaxed))
        note_untraced(fn, Untraced::Paused);
      return;
    }
    region_ = g_wrappers.regions[static_cast<unsigned>(fn)];
    if ((region_ & kExcludedRegionBit) != 0) {
      exclude(fn, may_reveal);
      return;
    }
    location_ = record::thread();
    if (location_ == nullptr) return;
    t_inside_mpi = true;
    entered_ = clock::stamp();
    if (poll && g_wrappers.poll_runs.load(std::memory_order_relaxed)) {
      exit_ = Exit::Undecided;
      return;
    }
    location_->enter(entered_, region_);
  }
  ~Call() {
    if (__builtin_expect(exit_ != Exit::Leave, 0)) {
      leave_otherwise();
      return;
    }
    if (location_ == nullptr) return;
    location_->leave(completed_ != 0 ? completed_ : clock::stamp(), region_);
    t_inside_mpi = false;
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  bool traced() const { return location_ != nullptr; }
  record::Location& location() const { return *location_; }
  /// Just before the PMPI call of a call that may wait: lets the recorder convert its buffer
  /// (record::Location::convert_while_waiting). Not while the call is hidden: revealed after the
  /// PMPI call, it writes its Enter at its entry time, before the end of the conversion.
  void convert_while_waiting() {
    if (exit_ != Exit::Hidden) location_->convert_while_waiting();
  }
  /// Just before the PMPI call of a blocking collective (never hidden: not revealable).
  void convert_at_collective() { location_->convert_at_collective(); }
  /// Time of Enter: also the time of records written before the PMPI call.
  record::LocalTime entered() const { return entered_; }
  /// Reads the clock once after the PMPI call; records written then and Leave share it, so a
  /// traced call costs two clock reads.
  record::LocalTime completed() { return completed_ = clock::stamp(); }
  /// After completed(): true when the call's records are to be written. An excluded call is
  /// recorded (Enter at its entry time) only when `found` (it completed or matched something).
  bool record_if(bool found) {
    if (exit_ != Exit::Hidden) return true;
    if (!found) return false;
    exit_ = Exit::Revealed;
    location_->enter(entered_, region_);
    return true;
  }
  /// A poll's record_if(), after completed(): `reveal` as there; `missed`: the poll succeeded
  /// without finding anything (no completion, no message), and `key` stands for its arguments.
  /// A missed poll right after a missed poll of the same function and key only extends that run
  /// (false: nothing to record); any other writes the Enter it kept back and its records (true).
  bool record_poll(bool reveal, bool missed, std::uint64_t key) {
    if (exit_ != Exit::Undecided) return record_if(reveal);
    if (missed && location_->extend_poll_run(completed_, region_, key)) {
      exit_ = Exit::Folded;
      return false;
    }
    location_->enter(entered_, region_);
    exit_ = missed ? Exit::PollRun : Exit::Revealed;
    poll_key_ = key;
    return true;
  }

private:
  /// How the destructor ends the call: Leave is the common case, the others are polls and
  /// excluded calls.
  enum class Exit : std::uint8_t {
    Leave,     ///< Leave at the completion time (or now), if the call was traced
    Hidden,    ///< excluded and not (yet) revealed by record_if(): nothing recorded, counted
    Revealed,  ///< Enter written after the PMPI call: Leave at the completion time
    Undecided, ///< a poll before record_poll(): nothing written yet
    PollRun,   ///< a missed poll that begins a run: its Leave carries the run's count
    Folded,    ///< a missed poll counted into the run before it: nothing to write
  };

  void leave_otherwise() noexcept {
    switch (exit_) {
    case Exit::Hidden:
      note_untraced(fn_, Untraced::Excluded);
      break;
    case Exit::Revealed:
      location_->leave(completed_, region_);
      break;
    case Exit::PollRun:
      location_->poll_run_leave(completed_, region_, poll_key_);
      break;
    case Exit::Leave:
    case Exit::Undecided:
    case Exit::Folded:
      break;
    }
    t_inside_mpi = false;
  }

  void exclude(FunctionId fn, bool may_reveal) noexcept {
    exit_ = Exit::Hidden;
    fn_ = fn;
    region_ &= ~kExcludedRegionBit;
    t_inside_mpi = true; // calls the MPI library makes inside this one stay unrecorded too
    if (!may_reveal) return;
    location_ = record::thread();
    entered_ = clock::stamp();
  }

  record::Location* location_ = nullptr;
  record::RegionId region_ = 0;
  Exit exit_ = Exit::Leave;
  FunctionId fn_{};
  record::LocalTime entered_ = 0;
  record::LocalTime completed_ = 0;
  std::uint64_t poll_key_ = 0;
};

/// Keys of a poll's arguments for Call::record_poll(): equal arguments give equal keys. Two
/// different argument sets sharing a key (a 64-bit mix) would merely join one run.
inline std::uint64_t poll_key_mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}
inline std::uint64_t poll_key(MPI_Request request) {
  return poll_key_mix(1, handle_key(request));
}
/// MPI_Testany, MPI_Testsome, MPI_Testall: the count and every handle.
inline std::uint64_t poll_key(int count, const MPI_Request* requests) {
  std::uint64_t h = poll_key_mix(2, static_cast<std::uint64_t>(count));
  for (int i = 0; i < count; ++i)
    h = poll_key_mix(h, handle_key(requests[i]));
  return h;
}
/// MPI_Iprobe, MPI_Improbe.
inline std::uint64_t poll_key(int source, int tag, MPI_Comm comm) {
  return poll_key_mix(poll_key_mix(poll_key_mix(3, static_cast<std::uint32_t>(source)),
                                   static_cast<std::uint32_t>(tag)),
                      handle_key(comm));
}

/// Registers one region per wrapped function (source "MPI", names MPI_*). Called once in MPI_Init.
void register_function_regions();

/// Recording on (end of MPI_Init, MPI_Pcontrol(1)), unless HTRACE_BUDGET stopped it for good
/// (pcontrol.cpp).
void resume_tracing();
/// The recorder's budget hook (record::add_budget_hook): recording off for the rest of the run,
/// calls counted as Untraced::Budget. Calls in progress end as recorded calls.
void stop_tracing_at_budget();

} // namespace htrace::mpi
