// Where the clock measurements during the run happen: at the end of a blocking collective on
// MPI_COMM_WORLD, after its Leave is recorded, so that every rank takes part at the same call
// and no thread of the tracer competes with the application in between.
//
// All ranks call the world's collectives in the same order, so each counts the same sequence.
// At some of them (a few per interval: the next one is proposed from the collective rate seen so
// far, halving the remaining time each time) the ranks agree, in one 8-byte allreduce on the
// tracer's communicator, whether any rank's interval has passed and when to look again; when it
// has, they all measure. Counted whether or not the call is recorded (MPI_Pcontrol,
// HTRACE_MPI_EXCLUDE), since those settings may differ between ranks; calls the MPI library makes
// inside another MPI call are not counted.
#pragma once

#include "mpi/wrapper_call.h"

#include <atomic>
#include <mpi.h>

namespace htrace::mpi {

namespace detail {
/// Set in MPI_Init when every rank measures during the run, cleared in MPI_Finalize.
inline std::atomic<bool> g_checkpoints_on{false};
void after_world_collective();
} // namespace detail

/// Enables the checkpoints when the interval agreed in MPI_Init is not 0.
void start_clock_checkpoints();
void stop_clock_checkpoints();

/// Constructed by the wrapper of every blocking collective before its Call, so it ends after the
/// Leave. Hot path: one comparison with MPI_COMM_WORLD and one relaxed load.
class ClockCheckpoint {
public:
  explicit ClockCheckpoint(MPI_Comm comm) noexcept
      : counted_(comm == MPI_COMM_WORLD && !t_inside_mpi &&
                 detail::g_checkpoints_on.load(std::memory_order_relaxed)) {}
  ~ClockCheckpoint() {
    if (counted_) detail::after_world_collective();
  }
  ClockCheckpoint(const ClockCheckpoint&) = delete;
  ClockCheckpoint& operator=(const ClockCheckpoint&) = delete;

private:
  bool counted_;
};

} // namespace htrace::mpi
