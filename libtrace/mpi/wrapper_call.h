// The frame every generated MPI wrapper runs in: re-entrancy guard, enabled check, Enter at
// construction and Leave at destruction. Hot path: inline, no allocation, two predictable branches.
#pragma once

#include "clock/base_clock.h"
#include "mpi/function_ids.gen.h"
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
  /// so an excluded call that completes something is still recorded.
  explicit Call(FunctionId fn, bool may_reveal = false) noexcept {
    if (t_inside_mpi) return;
    if (!g_wrappers.tracing.load(std::memory_order_relaxed)) {
      if (g_wrappers.paused.load(std::memory_order_relaxed)) note_untraced(fn, Untraced::Paused);
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
    location_->enter(entered_, region_);
  }
  ~Call() {
    if (excluded_) {
      if (hidden_) note_untraced(fn_, Untraced::Excluded);
      if (location_ != nullptr && !hidden_) location_->leave(completed_, region_);
      t_inside_mpi = false;
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
    if (!hidden_) location_->convert_while_waiting();
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
    if (!hidden_) return true;
    if (!found) return false;
    hidden_ = false;
    location_->enter(entered_, region_);
    return true;
  }

private:
  void exclude(FunctionId fn, bool may_reveal) noexcept {
    excluded_ = hidden_ = true;
    fn_ = fn;
    region_ &= ~kExcludedRegionBit;
    t_inside_mpi = true; // calls the MPI library makes inside this one stay unrecorded too
    if (!may_reveal) return;
    location_ = record::thread();
    entered_ = clock::stamp();
  }

  record::Location* location_ = nullptr;
  record::RegionId region_ = 0;
  bool excluded_ = false; ///< HTRACE_MPI_EXCLUDE names this function
  bool hidden_ = false;   ///< excluded and not (yet) revealed by record_if()
  FunctionId fn_{};
  record::LocalTime entered_ = 0;
  record::LocalTime completed_ = 0;
};

/// Registers one region per wrapped function (source "MPI", names MPI_*). Called once in MPI_Init.
void register_function_regions();

} // namespace htrace::mpi
