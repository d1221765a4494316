// One record per parallel-region instance, shared by the team's members: the team communicator,
// the region, and the master's end of the region, which bounds the workers' late end events.
//
// libomp reports a worker's end of its implicit barrier and implicit task only when the worker is
// released for its next region (or never, for the last region before MPI_Finalize). Those events
// are stamped at the master's end of the implicit barrier instead of the late arrival time.
#pragma once

#include "ompt/team_cache.h"
#include "record/recorder.h"

#include <atomic>
#include <cstdint>

namespace htrace::ompt {

struct ParallelInstance {
  std::atomic<std::uint64_t> serial{0};
  std::atomic<record::CommId> team{record::kNoComm};
  std::atomic<record::RegionId> region{0};
  std::atomic<const void*> codeptr{nullptr};
  std::atomic<TeamMembers*> members{nullptr};   ///< set when the team is reused (team_cache.h)
  std::atomic<record::LocalTime> master_end{0}; ///< 0 until the master leaves the implicit barrier
};

/// Starts a new instance; the returned serial (never 0) goes into OMPT's parallel_data.
std::uint64_t begin_parallel_instance(record::CommId team, TeamMembers* members,
                                      record::RegionId region, const void* codeptr);

/// The instance with this serial, or nullptr if its slot has been reused by a much later region
/// (a fixed ring of slots keeps the hot path allocation-free).
ParallelInstance* find_parallel_instance(std::uint64_t serial);

/// The master's end of the instance's implicit barrier, 0 if unknown (not yet, or slot reused).
record::LocalTime parallel_master_end(std::uint64_t serial);
void set_parallel_master_end(std::uint64_t serial, record::LocalTime t);

} // namespace htrace::ompt
