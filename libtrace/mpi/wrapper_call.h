// The frame every generated MPI wrapper runs in: re-entrancy guard, enabled check, Enter at
// construction and Leave at destruction. Hot path: inline, no allocation, two predictable branches.
#pragma once

#include "clock/base_clock.h"
#include "mpi/function_ids.gen.h"
#include "record/recorder.h"

#include <atomic>
#include <mpi.h>

namespace htrace::mpi {

/// Process-wide wrapper state: whether events are recorded and the region id of every function
/// (registered once in MPI_Init).
struct WrapperState {
  std::atomic<bool> tracing{false};
  record::RegionId regions[kFunctionCount] = {};
};
inline WrapperState g_wrappers;

/// True while this thread is inside a traced MPI call: MPI calls the MPI library (ROMIO, the
/// Fortran bindings' C helpers) makes on its own behalf are then passed through unrecorded.
inline thread_local bool t_inside_mpi __attribute__((tls_model("initial-exec"))) = false;

class Call {
public:
  explicit Call(FunctionId fn) noexcept {
    if (t_inside_mpi || !g_wrappers.tracing.load(std::memory_order_relaxed)) return;
    location_ = record::thread();
    if (location_ == nullptr) return;
    t_inside_mpi = true;
    region_ = g_wrappers.regions[static_cast<unsigned>(fn)];
    entered_ = clock::now();
    location_->enter(entered_, region_);
  }
  ~Call() {
    if (location_ == nullptr) return;
    location_->leave(completed_ != 0 ? completed_ : clock::now(), region_);
    t_inside_mpi = false;
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  bool traced() const { return location_ != nullptr; }
  record::Location& location() const { return *location_; }
  /// Time of Enter: also the time of records written before the PMPI call.
  record::LocalTime entered() const { return entered_; }
  /// Reads the clock once after the PMPI call; records written then and Leave share it, so a
  /// traced call costs two clock reads.
  record::LocalTime completed() { return completed_ = clock::now(); }

private:
  record::Location* location_ = nullptr;
  record::RegionId region_ = 0;
  record::LocalTime entered_ = 0;
  record::LocalTime completed_ = 0;
};

/// Registers one region per wrapped function (source "MPI", names MPI_*). Called once in MPI_Init.
void register_function_regions();

} // namespace htrace::mpi
