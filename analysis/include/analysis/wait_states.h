// Wait states of MPI and OpenMP programs after Scalasca's patterns (analysis/README.md gives the
// definitions and sources): time a process spends inside an MPI call because another process was
// late, and time an OpenMP thread waits in a barrier, for a lock or while its master runs serial
// code. The analysis is fed an archive's events as a reader streams them: each location's in
// record order, the locations interleaved in any way (in time order, window by window, or one
// after another), with the same results. It decides each wait as soon as both sides of a relation
// and the calls around them are known (wrong order: once advance() says enough is read). Messages
// are matched, collective instances and OpenMP barriers numbered and locks handed over by the rules
// htrace-correct uses (relations/), so both tools relate the same events. Memory: the MPI calls
// whose waits are still open, the messages in flight, the collective and OpenMP barrier instances
// some member has not left yet and the lock hand-overs missing a side, and the messages matched
// since the last advance(); never one entry per event.
#ifndef HTRACE_ANALYSIS_WAIT_STATES_H
#define HTRACE_ANALYSIS_WAIT_STATES_H

#include "format/global_defs.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace htrace::analysis {

enum class WaitPattern : std::uint8_t {
  LateSender, ///< a receive waits for the matching send to be entered
  /// The part of Late Sender where a message sent earlier to the same process was still in flight
  /// (Scalasca's "Late Sender, wrong order"; counted in Late Sender as well).
  LateSenderWrongOrder,
  LateReceiver,  ///< a blocking send waits for the matching receive to be posted
  WaitAtBarrier, ///< MPI_Barrier: each member waits for the last one to enter
  WaitAtNxN,     ///< all-to-all collectives: each member waits for the last one to enter
  LateBroadcast, ///< 1-to-N collectives: a non-root waits for the root to enter
  EarlyReduce,   ///< N-to-1 collectives: the root waits for the first non-root to enter
  EarlyScan,     ///< scan, exscan: rank r waits for the last of ranks < r to enter
  // OpenMP (per thread; not part of the POP efficiency, which counts MPI waits only)
  OmpExplicitBarrier,    ///< an explicit barrier: each thread waits for the last to enter
  OmpImplicitBarrier,    ///< an implicit barrier (end of a parallel or worksharing construct)
  OmpCriticalContention, ///< entering a critical construct another thread holds
  OmpLockContention,     ///< omp_set_[nest_]lock on a lock another thread holds
  OmpIdleThreads,        ///< a worker thread while its master runs serial code
};
constexpr std::size_t kWaitPatterns = 13;

/// The region of Idle Threads time the master spent outside any region, and the communicator of
/// OpenMP waits outside any team.
constexpr std::uint32_t kNoRegion = UINT32_MAX;
constexpr std::uint32_t kNoComm = UINT32_MAX;

/// "late_sender", ... (JSON keys) and "Late Sender", ... (Scalasca's names).
const char* pattern_key(WaitPattern p);
const char* pattern_name(WaitPattern p);

/// The waiting time of one pattern, in ns, split four ways; each split sums to total_ns.
struct PatternTime {
  std::int64_t total_ns = 0;
  std::uint64_t calls = 0;     ///< MPI calls (OpenMP: barriers, acquisitions) that waited > 0 ns
  std::int64_t longest_ns = 0; ///< the longest wait of one call
  std::vector<std::int64_t> by_location;           ///< the location that waited
  std::vector<std::int64_t> caused_by;             ///< the location it waited for
  std::map<std::uint32_t, std::int64_t> by_region; ///< the MPI call's (OpenMP construct's) region
  /// The communicator of the relation; OpenMP: the thread team's (kNoComm outside one).
  std::map<std::uint32_t, std::int64_t> by_comm;
};

struct WaitStates {
  std::array<PatternTime, kWaitPatterns> patterns;
  const PatternTime& operator[](WaitPattern p) const {
    return patterns[static_cast<std::size_t>(p)];
  }
};

/// What the analysis needs of an archive's definitions. Locations and processes are the
/// caller's indices; communicators and regions its references.
struct RunLayout {
  std::vector<std::uint32_t> process_of; ///< location -> its process
  /// Communicator -> its members' locations by communicator rank.
  std::map<std::uint32_t, std::vector<std::uint32_t>> comm_members;
  std::map<std::uint32_t, format::RegionDef> regions;
};

/// Location index a point-to-point record's peer could not be resolved to.
constexpr long kUnknownPeer = -1;
/// The request of MpiSend and MpiRecv.
constexpr std::uint64_t kBlockingRequest = UINT64_MAX;

/// One run's wait states. Events of each location must come in record order; times are ns on one
/// clock for all locations (waits are only as exact as the archive's clock condition).
class WaitStateAnalysis {
public:
  explicit WaitStateAnalysis(RunLayout layout);
  ~WaitStateAnalysis();
  WaitStateAnalysis(const WaitStateAnalysis&) = delete;
  WaitStateAnalysis& operator=(const WaitStateAnalysis&) = delete;

  void enter(std::uint32_t loc, std::int64_t t, std::uint32_t region);
  void leave(std::uint32_t loc, std::int64_t t);
  /// MpiSend (request kBlockingRequest) or MpiIsend; `receiver` is a location or kUnknownPeer.
  void send(std::uint32_t loc, std::uint32_t comm, long receiver, std::uint32_t tag,
            std::uint64_t request);
  /// MpiRecv (request kBlockingRequest) or MpiIrecv, the completion, at `t`; `sender` likewise.
  void recv(std::uint32_t loc, std::int64_t t, std::uint32_t comm, long sender, std::uint32_t tag,
            std::uint64_t request);
  void isend_complete(std::uint32_t loc, std::uint64_t request);
  void irecv_request(std::uint32_t loc, std::uint64_t request);
  void request_cancelled(std::uint32_t loc, std::uint64_t request);
  /// MpiCollectiveBegin / MpiCollectiveEnd.
  void collective_begin(std::uint32_t loc);
  void collective_end(std::uint32_t loc, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                      std::uint64_t received);
  /// NonBlockingCollectiveRequest / NonBlockingCollectiveComplete: numbered with the blocking
  /// calls of their communicator; a member starts at its request's call and waits in the call
  /// that completes it (analysis/README.md).
  void nbc_request(std::uint32_t loc, std::uint64_t request);
  void nbc_complete(std::uint32_t loc, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                    std::uint64_t received, std::uint64_t request);
  /// ThreadFork, ThreadTeamBegin/End (`team`: the team's communicator), ThreadJoin: the OpenMP
  /// teams whose barriers the analysis numbers as htrace-correct does (relations/openmp_thread.h).
  void thread_fork(std::uint32_t loc, std::int64_t t);
  void team_begin(std::uint32_t loc, std::int64_t t, std::uint32_t team);
  void team_end(std::uint32_t loc, std::int64_t t, std::uint32_t team);
  void thread_join(std::uint32_t loc, std::int64_t t);
  /// ThreadAcquireLock / ThreadReleaseLock (`model`: the paradigm, `order`: the acquisition
  /// order): release n hands the lock to acquisition n + 1.
  void lock_acquire(std::uint32_t loc, std::int64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order);
  void lock_release(std::uint32_t loc, std::int64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order);

  /// Every event before `t`, of every location, has been fed. A reader says so now and then:
  /// Late Sender, wrong order is decided only then (it needs every message sent before the late
  /// one), and what it keeps until then is freed. Without it, at finish().
  void advance(std::int64_t t);
  /// Before the first event: the events will come in time order, so each one's time says as
  /// much as advance(), and waits are decided sooner.
  void read_in_time_order();

  /// A hint: `loc`'s event comes next (a reader in time order may know it one event ahead).
  /// Brings what its events read into the cache; changes nothing.
  void prefetch(std::uint32_t loc) const;

  /// Called once for each MPI call that waited (never for OpenMP waits), when its waits are decided
  /// (possibly long after it left): its location, its enter and its longest wait of any pattern.
  /// Every wait of a call starts at its enter, so that longest wait is the time the call spent
  /// waiting at all.
  using CallWaitObserver =
      std::function<void(std::uint32_t loc, std::int64_t enter, std::int64_t wait_ns)>;
  void on_call_wait(CallWaitObserver observer);

  /// One wait of one pattern in one MPI call or OpenMP construct (Idle Threads, which no
  /// construct holds, excepted): the call's location, region and enter, the wait from that enter
  /// and the location waited for.
  struct CallWait {
    std::uint32_t loc;
    std::uint32_t region;
    std::int64_t enter;
    WaitPattern pattern;
    std::int64_t wait_ns;
    std::uint32_t cause;
  };
  /// Called for each such wait when it is decided, as the totals count it; an MPI call that
  /// waited in two patterns is reported twice. htrace-report marks the waits of the calls its
  /// detail timeline shows.
  using WaitObserver = std::function<void(const CallWait&)>;
  void on_wait(WaitObserver observer);

  /// After the last event: relations still open (a peer never seen, a call never left) wait for
  /// nothing. Call once.
  WaitStates finish();

private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace htrace::analysis
#endif
