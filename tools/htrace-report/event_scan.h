// Streams every event of an archive once, in timestamp order across locations, and hands the
// events a report needs to its sinks. Uncompressed POSIX archives without clock offsets are merged
// straight from their event files (format/event_merge.h: no open file per location, a few hundred
// bytes and a bounded window of the mapped file per location); others go through OTF2's global
// event reader (an open file and a buffered chunk per location). Nothing per event either way.
#pragma once

#include "archive_defs.h"

#include <cstdint>
#include <functional>
#include <otf2/OTF2_Events.h>
#include <string>
#include <vector>

namespace htrace::report {

/// The request EventSink::send and recv get for MpiSend and MpiRecv.
constexpr std::uint64_t kBlocking = UINT64_MAX;

/// Receives events; `loc` is an index into ArchiveDefs::locations, times are archive ticks.
class EventSink {
public:
  virtual ~EventSink() = default;
  virtual void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) = 0;
  virtual void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) = 0;
  // Point-to-point records: the ends of messages, matched in posting order (message_ends.h).
  // `request` is the record's request id, or kBlocking for MpiSend and MpiRecv.
  /// MpiSend/MpiIsend: `peer` is the receiver's rank in `comm`.
  virtual void send(std::uint32_t, std::uint64_t, std::uint32_t /*comm*/, std::uint32_t /*peer*/,
                    std::uint32_t /*tag*/, std::uint64_t /*bytes*/, std::uint64_t /*request*/) {}
  /// MpiRecv/MpiIrecv (the completion): `peer` is the sender's rank in `comm`.
  virtual void recv(std::uint32_t, std::uint64_t, std::uint32_t /*comm*/, std::uint32_t /*peer*/,
                    std::uint32_t /*tag*/, std::uint64_t /*bytes*/, std::uint64_t /*request*/) {}
  /// MpiIsendComplete, MpiIrecvRequest, MpiRequestCancelled.
  virtual void isend_complete(std::uint32_t, std::uint64_t, std::uint64_t /*request*/) {}
  virtual void irecv_request(std::uint32_t, std::uint64_t, std::uint64_t /*request*/) {}
  virtual void request_cancelled(std::uint32_t, std::uint64_t, std::uint64_t /*request*/) {}
  /// MpiCollectiveEnd; `root` is OTF2_UNDEFINED_UINT32 for rootless collectives.
  virtual void collective(std::uint32_t loc, std::uint64_t t, std::uint8_t op, std::uint32_t comm,
                          std::uint32_t root, std::uint64_t sent, std::uint64_t received) = 0;
  // The records of logical messages besides p2p and collective ends (clock_conditions.h); most
  // sinks ignore them.
  /// MpiCollectiveBegin.
  virtual void collective_begin(std::uint32_t, std::uint64_t) {}
  /// NonBlockingCollectiveRequest / NonBlockingCollectiveComplete (matched by `request`).
  virtual void nbc_request(std::uint32_t, std::uint64_t, std::uint64_t) {}
  virtual void nbc_complete(std::uint32_t, std::uint64_t, std::uint8_t, std::uint32_t,
                            std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t) {}
  /// ThreadFork, ThreadJoin, ThreadTeamBegin/End (`team`: the team's communicator).
  virtual void thread_fork(std::uint32_t, std::uint64_t) {}
  virtual void thread_join(std::uint32_t, std::uint64_t) {}
  virtual void team_begin(std::uint32_t, std::uint64_t, std::uint32_t) {}
  virtual void team_end(std::uint32_t, std::uint64_t, std::uint32_t) {}
  /// ThreadAcquireLock / ThreadReleaseLock (`order`: the acquisition order).
  virtual void lock_acquire(std::uint32_t, std::uint64_t, std::uint8_t, std::uint32_t,
                            std::uint32_t) {}
  virtual void lock_release(std::uint32_t, std::uint64_t, std::uint8_t, std::uint32_t,
                            std::uint32_t) {}
  /// ThreadTaskCreate / ThreadTaskSwitch / ThreadTaskComplete: the task is (team, creating
  /// thread, generation); a switch to generation 0 returns to the implicit task.
  virtual void task_create(std::uint32_t, std::uint64_t, std::uint32_t, std::uint32_t,
                           std::uint32_t) {}
  virtual void task_switch(std::uint32_t, std::uint64_t, std::uint32_t, std::uint32_t,
                           std::uint32_t) {}
  virtual void task_complete(std::uint32_t, std::uint64_t, std::uint32_t, std::uint32_t,
                             std::uint32_t) {}
  /// Metric: `n` values of the members of `metric` (a metric class or instance), each of the
  /// type `types[i]` says.
  virtual void metric(std::uint32_t, std::uint64_t, std::uint32_t /*metric*/, std::uint8_t /*n*/,
                      const OTF2_Type* /*types*/, const OTF2_MetricValue* /*values*/) {}
  /// Before the first event: whether the events come in time order (else window by window).
  virtual void begin(bool /*time_order*/) {}
  /// Every event before `t` has been delivered (said now and then, at most once per event).
  virtual void read_before(std::uint64_t /*t*/) {}
  /// Whether the sink needs the events in time order; if none does, they may come window by
  /// window (format/event_merge.h), each location's in record order as always.
  virtual bool needs_time_order() const { return true; }
  /// The next event delivered will be `loc`'s (the merge knows it one event ahead): a sink whose
  /// state is per location may start bringing that location's into the cache.
  virtual void prefetch(std::uint32_t /*loc*/) {}
  /// After the last event.
  virtual void finish() {}
};

/// Called now and then with the number of events read so far.
using Progress = std::function<void(std::uint64_t events_read)>;

/// Reads all events of `archive` into `sinks`; returns the number of events read. Throws
/// std::runtime_error on a read error.
std::uint64_t scan_events(const std::string& archive, const ArchiveDefs& defs,
                          const std::vector<EventSink*>& sinks, const Progress& progress = {});

} // namespace htrace::report
