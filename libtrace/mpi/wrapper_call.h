// The frame every generated MPI wrapper runs in: re-entrancy guard, enabled check, Enter at
// construction and Leave at destruction. Hot path: inline, no allocation, two predictable branches.
#pragma once

#include <mpi.h>

#include <atomic>

#include "clock/base_clock.h"
#include "mpi/function_ids.gen.h"
#include "record/recorder.h"

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
    location_->enter(clock::now(), region_);
  }
  ~Call() {
    if (location_ == nullptr) return;
    location_->leave(clock::now(), region_);
    t_inside_mpi = false;
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  bool traced() const { return location_ != nullptr; }
  record::Location& location() const { return *location_; }

private:
  record::Location* location_ = nullptr;
  record::RegionId region_ = 0;
};

/// Registers one region per wrapped function (source "MPI", names MPI_*). Called once in MPI_Init.
void register_function_regions();

} // namespace htrace::mpi
