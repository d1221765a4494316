// Location's event methods, inline: which EventRecord fields each event fills (field use by kind
// in event_record.h; the writer reads them back in location_writer.cpp). Each is one event's hot
// path: take the next slot, fill it, publish it. Included at the end of recorder.h, so that every
// caller of an event method can inline its body; include recorder.h, not this header.
#pragma once

#include "record/recorder.h"

namespace htrace::record {

inline void Location::enter(LocalTime t, RegionId region) {
  put(t, EventKind::Enter).u32[0] = region;
  publish();
}
inline void Location::leave(LocalTime t, RegionId region) {
  put(t, EventKind::Leave).u32[0] = region;
  publish();
}
inline void Location::poll_run_leave(LocalTime t, RegionId region, std::uint64_t key) {
  EventRecord& r = put(t, EventKind::PollRunLeave);
  r.u32[0] = region, r.u64[0] = 1, r.u64[1] = key;
  publish();
}
// The run's Leave is already published: a thread writing this buffer now (an emergency flush, a
// finalize on another thread) writes the run as far as it had come, and a signal handler on this
// thread sees the count before the time moves. Either way every poll before it is counted.
inline bool Location::extend_poll_run(LocalTime t, RegionId region, std::uint64_t key) {
  EventRecord* const cursor = cursor_.load(std::memory_order_relaxed);
  if (cursor == begin_) return false;
  EventRecord& last = cursor[-1];
  if (last.kind != EventKind::PollRunLeave || last.u32[0] != region || last.u64[1] != key)
    return false;
  ++last.u64[0];
  std::atomic_signal_fence(std::memory_order_release);
  last.time = t;
  return true;
}
inline void Location::mpi_send(LocalTime t, std::uint32_t receiver, CommId comm, std::uint32_t tag,
                               std::uint64_t bytes) {
  EventRecord& r = put(t, EventKind::MpiSend);
  r.u32[0] = receiver, r.u32[1] = comm, r.u32[2] = tag, r.u64[0] = bytes;
  publish();
}
inline void Location::mpi_isend(LocalTime t, std::uint32_t receiver, CommId comm, std::uint32_t tag,
                                std::uint64_t bytes, RequestId request) {
  EventRecord& r = put(t, EventKind::MpiIsend);
  r.u32[0] = receiver, r.u32[1] = comm, r.u32[2] = tag, r.u64[0] = bytes, r.u64[1] = request;
  publish();
}
inline void Location::mpi_isend_complete(LocalTime t, RequestId request) {
  put(t, EventKind::MpiIsendComplete).u64[1] = request;
  publish();
}
inline void Location::mpi_irecv_request(LocalTime t, RequestId request) {
  put(t, EventKind::MpiIrecvRequest).u64[1] = request;
  publish();
}
inline void Location::mpi_irecv(LocalTime t, std::uint32_t sender, CommId comm, std::uint32_t tag,
                                std::uint64_t bytes, RequestId request) {
  EventRecord& r = put(t, EventKind::MpiIrecv);
  r.u32[0] = sender, r.u32[1] = comm, r.u32[2] = tag, r.u64[0] = bytes, r.u64[1] = request;
  publish();
}
inline void Location::mpi_recv(LocalTime t, std::uint32_t sender, CommId comm, std::uint32_t tag,
                               std::uint64_t bytes) {
  EventRecord& r = put(t, EventKind::MpiRecv);
  r.u32[0] = sender, r.u32[1] = comm, r.u32[2] = tag, r.u64[0] = bytes;
  publish();
}
inline void Location::mpi_request_test(LocalTime t, RequestId request) {
  put(t, EventKind::MpiRequestTest).u64[1] = request;
  publish();
}
inline void Location::mpi_request_cancelled(LocalTime t, RequestId request) {
  put(t, EventKind::MpiRequestCancelled).u64[1] = request;
  publish();
}
inline void Location::mpi_collective_begin(LocalTime t) {
  put(t, EventKind::MpiCollectiveBegin);
  publish();
}
inline void Location::mpi_collective_end(LocalTime t, CollectiveOp op, CommId comm,
                                         std::uint32_t root, std::uint64_t bytes_sent,
                                         std::uint64_t bytes_received) {
  EventRecord& r = put(t, EventKind::MpiCollectiveEnd);
  r.op = op, r.u32[0] = root, r.u32[1] = comm, r.u64[0] = bytes_sent, r.u64[2] = bytes_received;
  publish();
}
inline void Location::mpi_nbc_request(LocalTime t, RequestId request) {
  put(t, EventKind::MpiNbcRequest).u64[1] = request;
  publish();
}
inline void Location::mpi_nbc_complete(LocalTime t, CommId comm, CollectiveOp op,
                                       std::uint32_t root, std::uint64_t bytes_sent,
                                       std::uint64_t bytes_received, RequestId request) {
  EventRecord& r = put(t, EventKind::MpiNbcComplete);
  r.op = op, r.u32[0] = root, r.u32[1] = comm, r.u64[0] = bytes_sent, r.u64[1] = request,
  r.u64[2] = bytes_received;
  publish();
}
// RMA and I/O records keep the window or I/O handle in u32[2] (see event_record.h).
inline void Location::rma_win_create(LocalTime t, RmaWinId win) {
  put(t, EventKind::RmaWinCreate).u32[2] = win;
  publish();
}
inline void Location::rma_win_destroy(LocalTime t, RmaWinId win) {
  put(t, EventKind::RmaWinDestroy).u32[2] = win;
  publish();
}
inline void Location::rma_collective_begin(LocalTime t) {
  put(t, EventKind::RmaCollectiveBegin);
  publish();
}
inline void Location::rma_collective_end(LocalTime t, CollectiveOp op, std::uint8_t sync_level,
                                         RmaWinId win, std::uint32_t root, std::uint64_t bytes_sent,
                                         std::uint64_t bytes_received) {
  EventRecord& r = put(t, EventKind::RmaCollectiveEnd);
  r.op = op, r.u32[0] = root, r.u32[2] = win, r.u64[0] = bytes_sent, r.u64[1] = sync_level,
  r.u64[2] = bytes_received;
  publish();
}
inline void Location::rma_group_sync(LocalTime t, std::uint8_t sync_level, RmaWinId win,
                                     GroupId group) {
  EventRecord& r = put(t, EventKind::RmaGroupSync);
  r.op = sync_level, r.u32[0] = group, r.u32[2] = win;
  publish();
}
inline void Location::rma_request_lock(LocalTime t, RmaWinId win, std::uint32_t remote,
                                       std::uint64_t lock, std::uint8_t lock_type) {
  EventRecord& r = put(t, EventKind::RmaRequestLock);
  r.op = lock_type, r.u32[0] = remote, r.u32[2] = win, r.u64[1] = lock;
  publish();
}
inline void Location::rma_release_lock(LocalTime t, RmaWinId win, std::uint32_t remote,
                                       std::uint64_t lock) {
  EventRecord& r = put(t, EventKind::RmaReleaseLock);
  r.u32[0] = remote, r.u32[2] = win, r.u64[1] = lock;
  publish();
}
inline void Location::rma_sync(LocalTime t, RmaWinId win, std::uint32_t remote,
                               std::uint8_t sync_type) {
  EventRecord& r = put(t, EventKind::RmaSync);
  r.op = sync_type, r.u32[0] = remote, r.u32[2] = win;
  publish();
}
inline void Location::rma_put(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint64_t bytes,
                              std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::RmaPut);
  r.u32[0] = remote, r.u32[2] = win, r.u64[0] = bytes, r.u64[1] = matching;
  publish();
}
inline void Location::rma_get(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint64_t bytes,
                              std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::RmaGet);
  r.u32[0] = remote, r.u32[2] = win, r.u64[0] = bytes, r.u64[1] = matching;
  publish();
}
inline void Location::rma_atomic(LocalTime t, RmaWinId win, std::uint32_t remote, std::uint8_t type,
                                 std::uint64_t bytes_sent, std::uint64_t bytes_received,
                                 std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::RmaAtomic);
  r.op = type, r.u32[0] = remote, r.u32[2] = win, r.u64[0] = bytes_sent, r.u64[1] = matching,
  r.u64[2] = bytes_received;
  publish();
}
inline void Location::rma_op_complete_blocking(LocalTime t, RmaWinId win, std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::RmaOpCompleteBlocking);
  r.u32[2] = win, r.u64[1] = matching;
  publish();
}
inline void Location::rma_op_complete_non_blocking(LocalTime t, RmaWinId win,
                                                   std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::RmaOpCompleteNonBlocking);
  r.u32[2] = win, r.u64[1] = matching;
  publish();
}
inline void Location::rma_op_complete_remote(LocalTime t, RmaWinId win, std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::RmaOpCompleteRemote);
  r.u32[2] = win, r.u64[1] = matching;
  publish();
}
inline void Location::rma_op_test(LocalTime t, RmaWinId win, std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::RmaOpTest);
  r.u32[2] = win, r.u64[1] = matching;
  publish();
}
inline void Location::io_create_handle(LocalTime t, IoHandleId handle, std::uint8_t access_mode,
                                       std::uint32_t creation_flags, std::uint32_t status_flags) {
  EventRecord& r = put(t, EventKind::IoCreateHandle);
  r.op = access_mode, r.u32[0] = creation_flags, r.u32[2] = handle, r.u64[0] = status_flags;
  publish();
}
inline void Location::io_destroy_handle(LocalTime t, IoHandleId handle) {
  put(t, EventKind::IoDestroyHandle).u32[2] = handle;
  publish();
}
inline void Location::io_operation_begin(LocalTime t, IoHandleId handle, std::uint8_t mode,
                                         std::uint32_t flags, std::uint64_t bytes_requested,
                                         std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::IoOperationBegin);
  r.op = mode, r.u32[0] = flags, r.u32[2] = handle, r.u64[0] = bytes_requested, r.u64[1] = matching;
  publish();
}
inline void Location::io_operation_issued(LocalTime t, IoHandleId handle, std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::IoOperationIssued);
  r.u32[2] = handle, r.u64[1] = matching;
  publish();
}
inline void Location::io_operation_test(LocalTime t, IoHandleId handle, std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::IoOperationTest);
  r.u32[2] = handle, r.u64[1] = matching;
  publish();
}
inline void Location::io_operation_complete(LocalTime t, IoHandleId handle,
                                            std::uint64_t bytes_done, std::uint64_t matching) {
  EventRecord& r = put(t, EventKind::IoOperationComplete);
  r.u32[2] = handle, r.u64[0] = bytes_done, r.u64[1] = matching;
  publish();
}
inline void Location::io_seek(LocalTime t, IoHandleId handle, std::int64_t offset_requested,
                              std::uint8_t whence, std::uint64_t offset_result) {
  EventRecord& r = put(t, EventKind::IoSeek);
  r.op = whence, r.u32[2] = handle, r.u64[0] = static_cast<std::uint64_t>(offset_requested),
  r.u64[2] = offset_result;
  publish();
}
inline void Location::io_delete_file(LocalTime t, IoFileId file) {
  put(t, EventKind::IoDeleteFile).u32[0] = file;
  publish();
}
inline void Location::thread_fork(LocalTime t, std::uint32_t requested_threads) {
  put(t, EventKind::ThreadFork).u32[0] = requested_threads;
  publish();
}
inline void Location::thread_join(LocalTime t) {
  put(t, EventKind::ThreadJoin);
  publish();
}
inline void Location::thread_team_begin(LocalTime t, CommId team) {
  put(t, EventKind::ThreadTeamBegin).u32[1] = team;
  publish();
}
inline void Location::thread_team_end(LocalTime t, CommId team) {
  put(t, EventKind::ThreadTeamEnd).u32[1] = team;
  publish();
}
inline void Location::thread_acquire_lock(LocalTime t, std::uint32_t lock,
                                          std::uint32_t acquisition_order) {
  EventRecord& r = put(t, EventKind::ThreadAcquireLock);
  r.u32[0] = lock, r.u32[2] = acquisition_order;
  publish();
}
inline void Location::thread_release_lock(LocalTime t, std::uint32_t lock,
                                          std::uint32_t acquisition_order) {
  EventRecord& r = put(t, EventKind::ThreadReleaseLock);
  r.u32[0] = lock, r.u32[2] = acquisition_order;
  publish();
}
inline void Location::thread_task_create(LocalTime t, CommId team, std::uint32_t creating_thread,
                                         std::uint32_t generation) {
  EventRecord& r = put(t, EventKind::ThreadTaskCreate);
  r.u32[0] = creating_thread, r.u32[1] = team, r.u32[2] = generation;
  publish();
}
inline void Location::thread_task_switch(LocalTime t, CommId team, std::uint32_t creating_thread,
                                         std::uint32_t generation) {
  EventRecord& r = put(t, EventKind::ThreadTaskSwitch);
  r.u32[0] = creating_thread, r.u32[1] = team, r.u32[2] = generation;
  publish();
}
inline void Location::thread_task_complete(LocalTime t, CommId team, std::uint32_t creating_thread,
                                           std::uint32_t generation) {
  EventRecord& r = put(t, EventKind::ThreadTaskComplete);
  r.u32[0] = creating_thread, r.u32[1] = team, r.u32[2] = generation;
  publish();
}
inline void Location::measurement_on_off(LocalTime t, bool on) {
  put(t, EventKind::MeasurementOnOff).op = on ? 1 : 0;
  publish();
}

} // namespace htrace::record
