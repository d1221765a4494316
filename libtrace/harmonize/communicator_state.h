// Per-communicator state of MPIX_Harmonize, cached as an attribute on the user's communicator and
// freed with it. Each state owns a private duplicate of that communicator, so the harmonize traffic
// and its clock resynchronizations stay collective on exactly the ranks that call it (the reference
// implementation resynchronized on MPI_COMM_WORLD, which deadlocks from a sub-communicator).
#pragma once

#include "clock/global_time_map.h"
#include "harmonize/slack_controller.h"

#include <cstdint>
#include <mpi.h>
#include <string>

namespace htrace::harmonize {

struct HarmonizeSettings {
  std::int64_t expiry_ns = 1000000000;
  SlackParameters slack;
  std::string sync_config = "hca3(slope=off)";
  std::int64_t spin_ns = 200000; ///< busy-wait (yielding) only this close to a deadline
  int verbosity = 1;
};

/// Reads the HTRACE_HARMONIZE_* rows of the option table (defaults if the environment is invalid).
HarmonizeSettings settings_from_environment();

struct CommunicatorState {
  explicit CommunicatorState(const HarmonizeSettings& s) : settings(s), slack(s.slack) {}
  ~CommunicatorState();
  CommunicatorState(const CommunicatorState&) = delete;
  CommunicatorState& operator=(const CommunicatorState&) = delete;

  HarmonizeSettings settings;
  MPI_Comm private_comm = MPI_COMM_NULL;
  int rank = 0;
  clock::GlobalTimeMap map;
  bool synchronized = false;
  std::int64_t last_sync_local_ns = 0;
  bool missed_last_deadline = false;
  SlackController slack; ///< meaningful on rank 0 of the communicator only
  std::uint64_t calls = 0;
  std::uint64_t missed = 0;
  std::uint64_t resyncs = 0;
};

/// The state attached to `comm`, created (collectively: it duplicates `comm`) on first use.
/// Returns an MPI error code; `*state` is valid on MPI_SUCCESS.
int state_for(MPI_Comm comm, CommunicatorState** state);

} // namespace htrace::harmonize
