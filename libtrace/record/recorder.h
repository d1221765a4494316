// The recorder's public API: what the MPI wrappers, the OMPT tool and harmonize call.
//
// Contract:
//  - Producers call `record::thread()` to get the calling thread's Location (created on first use,
//    one OTF2 location per thread; the thread that calls MPI_Init is thread 0, so its location id
//    equals the world rank; other threads get (index << 32) | rank).
//  - Event methods are the hot path: they append a fixed-size record to a preallocated buffer
//    (HTRACE_BUFFER_SIZE per thread), never allocate, never call MPI. Timestamps are stamps
//    from clock::stamp() (the raw TSC where it is invariant, never clock::now()); the recorder
//    maps them to base-clock ns and then to the global clock when writing.
//  - A full buffer is written to the archive and marked with a BufferFlush record.
//  - Ids passed in (regions, communicators, teams, locks) are process-local; the recorder unifies
//    them across ranks in finalize().
//
// Layout: the event methods are defined inline in location_events.h (included at the end: which
// record fields each event fills). Location keeps only the owning thread's buffer pointers, which
// those inline methods need; the rest of a location (buffer ownership, event file, statistics) is
// the recorder's own, in location_impl.h.
#pragma once

#include "clock/base_clock.h"
#include "clock/global_time_map.h"
#include "record/event_record.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace htrace {
struct Options;
}

namespace htrace::record {

using LocalTime = std::int64_t; // a clock::stamp() value (TSC ticks or base-clock ns)
using RegionId = std::uint32_t;
using CommId = std::uint32_t;    // process-local communicator id (MPI comm or OpenMP team)
using RequestId = std::uint64_t; // process-unique id of a non-blocking request
using LocationId = std::uint64_t;
using RmaWinId = std::uint32_t; // process-local MPI window id (rma_io_defs.h)
using GroupId = std::uint32_t;  // process-local group of world ranks (PSCW access/exposure groups)
using IoHandleId = std::uint32_t; // process-local MPI_File handle id
using IoFileId = std::uint32_t;   // process-local file (by name) id

constexpr std::uint32_t kNoRank =
    0xffffffffu; ///< OTF2_UNDEFINED_UINT32: root of rootless collectives

enum class Paradigm : std::uint8_t { Mpi, OpenMp, Measurement, User };
// Mirrors OTF2_RegionRole values used by htrace.
enum class RegionRole : std::uint8_t {
  Function,
  Wrapper,
  PointToPoint,
  Collective,
  Barrier,
  ImplicitBarrier,
  Parallel,
  Loop,
  Sections,
  Single,
  Master,
  Critical,
  Atomic,
  Flush,
  Task,
  TaskWait,
  TaskCreate,
  Ordered,
  Artificial
};
// Mirrors OTF2_CollectiveOp (same numeric values, see otf2/OTF2_Events.h).
using CollectiveOp = std::uint8_t;

/// Registers a region once per name; thread-safe, not for the hot path (cache the id).
RegionId register_region(const std::string& name, Paradigm paradigm, RegionRole role);

/// Registers a process-local communicator. `world_ranks` lists the members' world ranks in
/// communicator rank order (for an intercommunicator: the local group; `remote_world_ranks` holds
/// the remote group). `parent` is the communicator it was derived from (kNoComm for WORLD/SELF).
/// Every registration gets a fresh id (ids are never reused, so events stay unambiguous).
constexpr CommId kNoComm = 0xffffffffu;
CommId register_mpi_comm(const std::string& name, const std::vector<int>& world_ranks,
                         const std::vector<int>& remote_world_ranks, CommId parent);
/// Communicator freed: the id may be reused by a later registration (definition stays).
void release_mpi_comm(CommId comm);

/// An OpenMP team: `parent` is the encountering thread's team (kNoComm for the initial thread).
/// Members are added as they begin the team; thread_num is the OpenMP thread number.
CommId register_thread_team(CommId parent, std::uint32_t size);
void add_team_member(CommId team, std::uint32_t thread_num, LocationId location);

/// MPI windows, groups of world ranks (PSCW), files and MPI_File handles (rma_io_defs.cpp). Every
/// registration of a window or handle gets a fresh id; groups and files are shared by equal
/// members or name. Unified across ranks in finalize(): a window or handle is the k-th one a rank
/// created over the same (unified) communicator, as MPI creates them collectively in one order.
RmaWinId register_rma_win(const std::string& name, CommId comm);
GroupId register_rank_group(const std::vector<int>& world_ranks);
IoFileId register_io_file(const std::string& name);
IoHandleId register_io_handle(const std::string& name, IoFileId file, CommId comm);

class Location {
public:
  LocationId id() const;
  /// The stamp of the newest event this location holds, buffered or written (0: none). For the
  /// owning thread, or for another one while the owner records nothing (finalize hooks).
  LocalTime newest_stamp() const;

  void enter(LocalTime t, RegionId region);
  void leave(LocalTime t, RegionId region);

  // Runs of unsuccessful polls (MPI_Test*, MPI_Iprobe, MPI_Improbe): one call from the first
  // poll's Enter to the last one's Leave, which carries the number of polls. `key` stands for the
  // polls' arguments (request handles, or source, tag and communicator).
  /// Leave of the first poll of a run (count 1).
  void poll_run_leave(LocalTime t, RegionId region, std::uint64_t key);
  /// Counts one more poll into the run whose Leave is the thread's last record and moves that
  /// Leave to `t`; false, recording nothing, when the last record is anything else (another
  /// event came in between, or a conversion emptied the buffer): a new run begins.
  bool extend_poll_run(LocalTime t, RegionId region, std::uint64_t key);

  // MPI point-to-point. Ranks are ranks in `comm`.
  void mpi_send(LocalTime t, std::uint32_t receiver, CommId comm, std::uint32_t tag,
                std::uint64_t bytes);
  void mpi_isend(LocalTime t, std::uint32_t receiver, CommId comm, std::uint32_t tag,
                 std::uint64_t bytes, RequestId request);
  void mpi_isend_complete(LocalTime t, RequestId request);
  void mpi_irecv_request(LocalTime t, RequestId request);
  void mpi_irecv(LocalTime t, std::uint32_t sender, CommId comm, std::uint32_t tag,
                 std::uint64_t bytes, RequestId request);
  void mpi_recv(LocalTime t, std::uint32_t sender, CommId comm, std::uint32_t tag,
                std::uint64_t bytes);
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

  // MPI one-sided communication (OTF2 RMA records). `win` is an RmaWinId, `remote` a rank in the
  // window's communicator (kNoRank: every rank of the window), enums are OTF2's values.
  void rma_win_create(LocalTime t, RmaWinId win);
  void rma_win_destroy(LocalTime t, RmaWinId win);
  void rma_collective_begin(LocalTime t);
  void rma_collective_end(LocalTime t, CollectiveOp op, std::uint8_t sync_level, RmaWinId win,
                          std::uint32_t root, std::uint64_t bytes_sent,
                          std::uint64_t bytes_received);
  void rma_group_sync(LocalTime t, std::uint8_t sync_level, RmaWinId win, GroupId group);
  void rma_request_lock(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint64_t lock,
                        std::uint8_t lock_type);
  void rma_release_lock(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint64_t lock);
  void rma_sync(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint8_t sync_type);
  void rma_put(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint64_t bytes,
               std::uint64_t matching);
  void rma_get(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint64_t bytes,
               std::uint64_t matching);
  void rma_atomic(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint8_t type,
                  std::uint64_t bytes_sent, std::uint64_t bytes_received, std::uint64_t matching);
  void rma_op_complete_blocking(LocalTime t, RmaWinId win, std::uint64_t matching);
  void rma_op_complete_non_blocking(LocalTime t, RmaWinId win, std::uint64_t matching);
  /// The operation is complete at its target (written on the origin, at the synchronization
  /// that guarantees it).
  void rma_op_complete_remote(LocalTime t, RmaWinId win, std::uint64_t matching);
  void rma_op_test(LocalTime t, RmaWinId win, std::uint64_t matching);

  // MPI-IO (OTF2 I/O records). `handle` is an IoHandleId; enums and flags are OTF2's values.
  void io_create_handle(LocalTime t, IoHandleId handle, std::uint8_t access_mode,
                        std::uint32_t creation_flags, std::uint32_t status_flags);
  void io_destroy_handle(LocalTime t, IoHandleId handle);
  void io_operation_begin(LocalTime t, IoHandleId handle, std::uint8_t mode, std::uint32_t flags,
                          std::uint64_t bytes_requested, std::uint64_t matching);
  void io_operation_issued(LocalTime t, IoHandleId handle, std::uint64_t matching);
  void io_operation_test(LocalTime t, IoHandleId handle, std::uint64_t matching);
  void io_operation_complete(LocalTime t, IoHandleId handle, std::uint64_t bytes_done,
                             std::uint64_t matching);
  void io_seek(LocalTime t, IoHandleId handle, std::int64_t offset_requested, std::uint8_t whence,
               std::uint64_t offset_result);
  void io_delete_file(LocalTime t, IoFileId file);

  // Threads (OpenMP).
  void thread_fork(LocalTime t, std::uint32_t requested_threads);
  void thread_join(LocalTime t);
  void thread_team_begin(LocalTime t, CommId team);
  void thread_team_end(LocalTime t, CommId team);
  void thread_acquire_lock(LocalTime t, std::uint32_t lock, std::uint32_t acquisition_order);
  void thread_release_lock(LocalTime t, std::uint32_t lock, std::uint32_t acquisition_order);
  void thread_task_create(LocalTime t, CommId team, std::uint32_t creating_thread,
                          std::uint32_t generation);
  void thread_task_switch(LocalTime t, CommId team, std::uint32_t creating_thread,
                          std::uint32_t generation);
  void thread_task_complete(LocalTime t, CommId team, std::uint32_t creating_thread,
                            std::uint32_t generation);

  /// Recording switched off (MPI_Pcontrol(0)) or back on for this location.
  void measurement_on_off(LocalTime t, bool on);

  /// Called just before a call that may wait (a receive, a wait): once the buffer holds
  /// kConvertAheadRecords, they are converted to OTF2 now, while the thread would likely wait
  /// anyway, instead of all at once when the buffer is full. A full-buffer conversion stalls the
  /// thread for its whole length, and every rank waiting on it; a small conversion before a
  /// receive mostly overlaps the partner's work. Owning thread only.
  void convert_while_waiting() {
    if (cursor_.load(std::memory_order_relaxed) - begin_ >= kConvertAheadRecords) convert_ahead();
  }
  /// Before a blocking collective: converts at every kCollectivesPerConversion-th collective of
  /// the thread. Ranks that call the same collectives convert in the same call, so their
  /// conversions overlap each other instead of each rank's stalling all the others in turn (a
  /// buffer fills at a different call on every rank). Owning thread only.
  void convert_at_collective() {
    if ((++collectives_ & (kCollectivesPerConversion - 1)) == 0 &&
        cursor_.load(std::memory_order_relaxed) != begin_)
      convert_ahead();
  }
  /// About 10 point-to-point calls: a conversion of ~5 ns a record plus ~10 ns stays within the
  /// few hundred ns a ping-pong waits for the reply.
  static constexpr std::ptrdiff_t kConvertAheadRecords = 32;
  static constexpr unsigned kCollectivesPerConversion = 32; ///< a power of 2

private:
  friend class LocationImpl;    // the recorder's part of every location (location_impl.h)
  friend struct LocationAccess; // the writer of its buffer (location_writer.h)
  /// Only LocationImpl, the one concrete location (made by the recorder), constructs and destroys.
  Location() = default;
  ~Location() = default;
  Location(const Location&) = delete;
  Location& operator=(const Location&) = delete;

  /// The next free slot, with its time and kind; the caller fills the fields, then publish()es
  /// it. The out-of-line overflow path writes the full buffer out first.
  EventRecord& put(LocalTime t, EventKind kind) {
    EventRecord* r = cursor_.load(std::memory_order_relaxed);
    if (__builtin_expect(r == end_, 0)) r = overflow();
    r->time = t;
    r->kind = kind;
    return *r;
  }
  /// Counts the record put() gave out, once it is complete. A release store (a plain store on
  /// x86): a thread that writes this buffer out concurrently (the emergency flush after a signal
  /// or MPI_Abort on another thread, finalize) reads the cursor with acquire and so sees only
  /// whole records, never one the owner is still filling.
  void publish() {
    cursor_.store(cursor_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  EventRecord* overflow(); ///< returns the (empty) buffer's first slot
  void convert_ahead();

  // What the inline methods touch, in one cache line. Only the owning thread moves the cursor
  // forward; writers reset it to begin_ under the location's write mutex.
  std::atomic<EventRecord*> cursor_{nullptr};
  EventRecord* end_ = nullptr;
  EventRecord* begin_ = nullptr;
  unsigned collectives_ = 0; ///< blocking collectives so far (convert_at_collective)
};

namespace detail {
// initial-exec: libhtrace is preloaded, so its TLS is static and every traced call reaches its
// location with one fs-relative load, without a call.
inline thread_local Location* t_location __attribute__((tls_model("initial-exec"))) = nullptr;
/// False once recording stopped or tracing is disabled: thread() then returns nullptr.
inline std::atomic<bool> g_thread_lookup_ok{true};
Location* thread_slow(); ///< first event of a thread, or recording over
} // namespace detail

/// The calling thread's location; nullptr when tracing is disabled or has failed.
inline Location* thread() {
  Location* loc = detail::t_location;
  if (__builtin_expect(loc != nullptr, 1) &&
      detail::g_thread_lookup_ok.load(std::memory_order_relaxed))
    return loc;
  return detail::thread_slow();
}

/// Lifecycle, driven by the MPI_Init / MPI_Finalize wrappers.
/// start(): after PMPI_Init, on the tracer's private duplicate of MPI_COMM_WORLD. Creates the
/// archive (name agreed across ranks), returns false (and logs why) if tracing cannot proceed.
bool start(/* private world communicator */ void* mpi_comm_handle);
/// Same with options the caller already parsed (start(void*) parses HTRACE_* itself).
bool start(void* mpi_comm_handle, const Options& options);
/// Options for events recorded before start() (buffer size, enable). Optional: without it the
/// first thread() parses the environment. Call before the first event.
void configure(const Options& options);
void set_global_time_map(const clock::GlobalTimeMap& map);
void set_archive_property(const std::string& name, const std::string& value);
void set_process_property(const std::string& name,
                          std::int64_t value); ///< per-location, all threads of this rank
/// finalize(): before PMPI_Finalize. Writes remaining events, unifies definitions, closes archive.
void finalize();
/// Registers `hook` to run first in finalize(), on the finalizing thread, before anything is
/// written (the OMPT tool ends the constructs libomp never reports as ended). Not thread-hot.
void add_finalize_hook(void (*hook)());
/// HTRACE_BUDGET: `hook` runs once when this rank's event files reach the budget, on the thread
/// whose buffer conversion reached it and inside that conversion, so it may only switch its
/// producer off (store flags); the events that producer still records (the rest of a call in
/// progress) are written. Registered after the budget was reached, it runs at once; a
/// registration racing with the cut may run it twice. At most 4 hooks.
void add_budget_hook(void (*hook)());
/// True once this rank's event files reached HTRACE_BUDGET (recording stopped for good).
bool budget_reached();
/// The stamp of the newest event converted when the budget was reached (0 before): finalize ends
/// every location with a MeasurementOnOff (off) record there (or at its last event, if later).
LocalTime budget_cut();
/// Emergency path (MPI_Abort, fatal signal): write what can be written, never block on other ranks.
void emergency_flush(const char* reason);
/// For a handler of a signal that comes from outside (SIGTERM, SIGINT): true when the calling
/// thread is converting its own full buffer; the handler then returns at once and the signal is
/// raised again as soon as the conversion is done, so that buffer is not lost. Async-signal-safe.
bool defer_signal_during_own_flush(int sig);

/// World rank of this process once start() ran (cached, no MPI call); -1 before.
int world_rank();
/// True between a successful start() and finalize()/emergency_flush()/a write failure.
bool recording();

/// Counters for the run summary. Process values are valid any time; the global_* values are
/// summed over all ranks by finalize() and valid on rank 0 afterwards.
struct Summary {
  std::uint64_t events_recorded = 0; ///< events handed to the recorder by this process
  std::uint64_t events_written = 0;  ///< OTF2 records written (BufferFlush records included)
  std::uint64_t events_dropped = 0;  ///< lost (pre-start overflow, write failure, after finalize)
  std::uint64_t timestamps_clamped = 0; ///< raised to the previous one of their location
  std::int64_t largest_clamp_ns = 0;    ///< how far the farthest of them went back
  std::uint64_t buffer_flushes = 0;
  std::uint64_t bytes_written = 0; ///< size of this process's event files (after finalize)
  std::uint64_t global_events_written = 0;
  std::uint64_t global_bytes_written = 0;
  std::uint64_t global_events_dropped = 0;
  std::uint64_t global_timestamps_clamped = 0;
  std::int64_t global_largest_clamp_ns = 0;
  std::uint64_t global_ranks_over_budget = 0; ///< ranks HTRACE_BUDGET stopped
  std::string archive_path;                   ///< directory of the archive ("" when not recording)
  bool archive_complete = false;              ///< finalize() wrote a readable archive
};
Summary summary();

} // namespace htrace::record

#include "record/location_events.h" // the event methods, inline
