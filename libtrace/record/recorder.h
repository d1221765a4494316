// The recorder: per-thread event buffers that become one OTF2 archive.
//
// Contract (shared by mpi/ wrappers and ompt/):
//  - Producers call `record::thread()` to get the calling thread's Location (created on first use,
//    one OTF2 location per thread; the thread that calls MPI_Init is thread 0, so its location id
//    equals the world rank; other threads get (index << 32) | rank).
//  - Event methods are the hot path: they append a fixed-size record to a preallocated buffer
//    (HTRACE_BUFFER_SIZE per thread), never allocate, never call MPI. Timestamps are LOCAL
//    base-clock ns (clock::now()); the recorder maps them to the global clock when writing.
//  - A full buffer is written to the archive and marked with a BufferFlush record.
//  - Ids passed in (regions, communicators, teams, locks) are process-local; the recorder unifies
//    them across ranks in finalize().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clock/global_time_map.h"

namespace htrace::record {

using LocalTime = std::int64_t; // ns on the base clock
using RegionId = std::uint32_t;
using CommId = std::uint32_t;    // process-local communicator id (MPI comm or OpenMP team)
using RequestId = std::uint64_t; // process-unique id of a non-blocking request
using LocationId = std::uint64_t;

constexpr std::uint32_t kNoRank = 0xffffffffu; ///< OTF2_UNDEFINED_UINT32: root of rootless collectives

enum class Paradigm : std::uint8_t { Mpi, OpenMp, Measurement, User };
// Mirrors OTF2_RegionRole values used by htrace.
enum class RegionRole : std::uint8_t {
  Function, Wrapper, PointToPoint, Collective, Barrier, ImplicitBarrier, Parallel, Loop, Sections,
  Single, Master, Critical, Atomic, Flush, Task, TaskWait, TaskCreate, Ordered, Artificial
};
// Mirrors OTF2_CollectiveOp (same numeric values, see otf2/OTF2_Events.h).
using CollectiveOp = std::uint8_t;

/// Registers a region once per name; thread-safe, not for the hot path (cache the id).
RegionId register_region(const std::string& name, Paradigm paradigm, RegionRole role);

/// Registers a process-local communicator. `world_ranks` lists the members' world ranks in
/// communicator rank order (for an intercommunicator: the local group; `remote_world_ranks` holds
/// the remote group). `parent` is the communicator it was derived from (kNoComm for WORLD/SELF).
constexpr CommId kNoComm = 0xffffffffu;
CommId register_mpi_comm(const std::string& name, const std::vector<int>& world_ranks,
                         const std::vector<int>& remote_world_ranks, CommId parent);
/// Communicator freed: the id may be reused by a later registration (definition stays).
void release_mpi_comm(CommId comm);

/// An OpenMP team: `parent` is the encountering thread's team (kNoComm for the initial thread).
/// Members are added as they begin the team; thread_num is the OpenMP thread number.
CommId register_thread_team(CommId parent, std::uint32_t size);
void add_team_member(CommId team, std::uint32_t thread_num, LocationId location);

class Location {
public:
  LocationId id() const;

  void enter(LocalTime t, RegionId region);
  void leave(LocalTime t, RegionId region);

  // MPI point-to-point. Ranks are ranks in `comm`.
  void mpi_send(LocalTime t, std::uint32_t receiver, CommId comm, std::uint32_t tag, std::uint64_t bytes);
  void mpi_isend(LocalTime t, std::uint32_t receiver, CommId comm, std::uint32_t tag,
                 std::uint64_t bytes, RequestId request);
  void mpi_isend_complete(LocalTime t, RequestId request);
  void mpi_irecv_request(LocalTime t, RequestId request);
  void mpi_irecv(LocalTime t, std::uint32_t sender, CommId comm, std::uint32_t tag,
                 std::uint64_t bytes, RequestId request);
  void mpi_recv(LocalTime t, std::uint32_t sender, CommId comm, std::uint32_t tag, std::uint64_t bytes);
  void mpi_request_test(LocalTime t, RequestId request);
  void mpi_request_cancelled(LocalTime t, RequestId request);

  // MPI collectives (blocking: Begin ... End inside the Enter/Leave of the call).
  void mpi_collective_begin(LocalTime t);
  void mpi_collective_end(LocalTime t, CollectiveOp op, CommId comm, std::uint32_t root,
                          std::uint64_t bytes_sent, std::uint64_t bytes_received);
  // Non-blocking collectives: request at the call, complete at wait/test success.
  void mpi_nbc_request(LocalTime t, RequestId request);
  void mpi_nbc_complete(LocalTime t, CommId comm, CollectiveOp op, std::uint32_t root,
                        std::uint64_t bytes_sent, std::uint64_t bytes_received, RequestId request);

  // Threads (OpenMP).
  void thread_fork(LocalTime t, std::uint32_t requested_threads);
  void thread_join(LocalTime t);
  void thread_team_begin(LocalTime t, CommId team);
  void thread_team_end(LocalTime t, CommId team);
  void thread_acquire_lock(LocalTime t, std::uint32_t lock, std::uint32_t acquisition_order);
  void thread_release_lock(LocalTime t, std::uint32_t lock, std::uint32_t acquisition_order);
  void thread_task_create(LocalTime t, CommId team, std::uint32_t creating_thread, std::uint32_t generation);
  void thread_task_switch(LocalTime t, CommId team, std::uint32_t creating_thread, std::uint32_t generation);
  void thread_task_complete(LocalTime t, CommId team, std::uint32_t creating_thread, std::uint32_t generation);

  // ... implementation-private members follow in the implementation's version of this header.
};

/// The calling thread's location; nullptr when tracing is disabled or has failed.
Location* thread();

/// Lifecycle, driven by the MPI_Init / MPI_Finalize wrappers.
/// start(): after PMPI_Init, on the tracer's private duplicate of MPI_COMM_WORLD. Creates the archive
/// (name agreed across ranks), returns false (and logs why) if tracing cannot proceed.
bool start(/* private world communicator */ void* mpi_comm_handle);
void set_global_time_map(const clock::GlobalTimeMap& map);
void set_archive_property(const std::string& name, const std::string& value);
void set_process_property(const std::string& name, std::int64_t value); ///< per-location, all threads of this rank
/// finalize(): before PMPI_Finalize. Writes remaining events, unifies definitions, closes archive.
void finalize();
/// Emergency path (MPI_Abort, fatal signal): write what can be written, never block on other ranks.
void emergency_flush(const char* reason);

} // namespace htrace::record
