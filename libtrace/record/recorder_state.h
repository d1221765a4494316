// Process-wide state of the recorder, shared by its translation units (not a public header).
// One instance, created on first use and intentionally never destroyed: threads may still record
// while the process exits, and must never touch freed memory.
#pragma once

#include "clock/global_time_map.h"
#include "common/options.h"
#include "record/budget.h"
#include "record/location_impl.h"
#include "record/recorder.h"
#include "record/rma_io_defs.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mpi.h>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

struct OTF2_Archive_struct;

namespace htrace::record {

enum class Phase : int {
  BeforeStart, ///< events are buffered (and kept) until the archive exists
  Recording,   ///< archive open, full buffers are written
  Stopped,     ///< finalized, failed or emergency-flushed: events are counted as dropped
  Disabled,    ///< HTRACE_ENABLE=0 or start() failed: thread() returns nullptr
};

struct RegionDef {
  std::string name;
  Paradigm paradigm;
  RegionRole role;
};

/// An MPI communicator or an OpenMP team, in the one process-local id space.
constexpr LocationId kNoLocation = ~LocationId{0};

struct CommDef {
  bool is_team = false;
  std::string name;
  CommId parent = kNoComm;
  std::vector<int> world_ranks;           ///< MPI: members in comm rank order (local group)
  std::vector<int> remote_world_ranks;    ///< MPI intercommunicator: remote group
  std::vector<LocationId> team_locations; ///< team: location id per OpenMP thread number
  std::uint32_t team_members_missing = 0; ///< team: slots not yet filled by add_team_member
  CommId alias = kNoComm; ///< team: an identical earlier team this one was merged into
};

struct State {
  std::mutex mutex; ///< registry and definitions (never taken on the hot path)
  std::atomic<Phase> phase{Phase::BeforeStart};

  bool configured = false;
  Options options;

  std::vector<std::unique_ptr<LocationImpl>> locations; ///< creation order until start() reorders
  std::uint32_t next_index = 0;

  std::vector<RegionDef> regions;
  std::unordered_map<std::string, RegionId> region_by_name;
  std::vector<CommDef> comms;
  /// Complete teams by (parent, members): a new identical team (every parallel region makes one)
  /// becomes an alias, so the definitions stay small in long runs.
  std::map<std::pair<CommId, std::vector<LocationId>>, CommId> team_by_members;
  RmaIoDefs rma_io; ///< windows, PSCW groups, files, MPI_File handles (rma_io_defs.cpp)

  std::vector<std::pair<std::string, std::string>> archive_properties;
  std::vector<std::pair<std::string, std::int64_t>> process_properties;

  // Set by start().
  int rank = -1;
  int size = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  OTF2_Archive_struct* archive = nullptr;
  std::string archive_path;
  std::int64_t start_realtime_ns = 0; ///< CLOCK_REALTIME at start_base_ns
  std::int64_t start_base_ns = 0;
  /// CLOCK_MONOTONIC at start(), for durations in messages (the base clock may change in MPI_Init).
  std::int64_t start_monotonic_ns = 0;

  std::mutex map_mutex;
  clock::GlobalTimeMap map;
  std::atomic<std::uint32_t> map_version{0}; ///< changes with every set_global_time_map()

  std::atomic<bool> finalize_pending{false}; ///< start() succeeded; finalize/emergency not yet run
  std::atomic<bool> archive_ready{false};    ///< archive opened by start(), not yet closed
  std::atomic<bool> failed{false};           ///< writing failed: later writes are discarded
  std::atomic<bool> failure_logged{false};
  /// A fatal signal waited for its thread's own buffer conversion; the event being recorded then
  /// was not stored (see defer_signal_during_own_flush).
  std::atomic<bool> deferred_signal_event_lost{false};
  std::atomic<std::uint64_t> dropped_elsewhere{0}; ///< drops not attributable to a location
  TraceBudget budget;                              ///< HTRACE_BUDGET, limit set by start()
  Summary totals;                                  ///< global_* fields after finalize()

  clock::GlobalTimeMap current_map() {
    std::lock_guard<std::mutex> lock(map_mutex);
    return map;
  }
  /// Stops recording after an error; logs only the first reason.
  void fail(const std::string& reason);
};

State& state();

/// Makes the options known (parses the environment when nobody called configure()).
/// Caller holds state().mutex.
void ensure_configured_locked(State& s);

} // namespace htrace::record
