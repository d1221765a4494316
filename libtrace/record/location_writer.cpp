// Conversion of buffered records into OTF2 events. Runs on the owning thread when its buffer is
// full, or on the finalizing/emergency thread at the end; never on the per-event path.
#include "record/location_writer.h"

#include "clock/base_clock.h"
#include "common/log.h"

#include <algorithm>
#include <new>
#include <otf2/otf2.h>

namespace htrace::record {
namespace {

thread_local Location* t_being_written = nullptr;

// Pre-start overflow keeps up to this many bytes of extra buffers per thread (at least 3
// buffers) before dropping events.
constexpr std::size_t kMaxPendingBytes = 48u << 20;

/// Global timestamp for OTF2 from a stamp (clock::stamp(): TSC or base-clock ns), never below
/// the previous one of this location (OTF2 rejects a decreasing timestamp); the clamp is counted.
struct TimeClamp {
  const clock::GlobalTimeMap& map;
  std::int64_t& last;
  std::uint64_t& clamped;
  clock::StampConverter global{map}; ///< stamp -> base-clock ns -> global ns, fused
  OTF2_TimeStamp operator()(clock::Stamp stamp) {
    std::int64_t g = global(stamp);
    if (g < last) {
      g = last;
      ++clamped;
    }
    last = g;
    return static_cast<OTF2_TimeStamp>(g);
  }
};

OTF2_ErrorCode write_one(OTF2_EvtWriter* w, const EventRecord& r, OTF2_TimeStamp t) {
  switch (r.kind) {
  case EventKind::Enter:
    return OTF2_EvtWriter_Enter(w, nullptr, t, r.u32[0]);
  case EventKind::Leave:
    return OTF2_EvtWriter_Leave(w, nullptr, t, r.u32[0]);
  case EventKind::MpiSend:
    return OTF2_EvtWriter_MpiSend(w, nullptr, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0]);
  case EventKind::MpiIsend:
    return OTF2_EvtWriter_MpiIsend(w, nullptr, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0], r.u64[1]);
  case EventKind::MpiIsendComplete:
    return OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, r.u64[1]);
  case EventKind::MpiIrecvRequest:
    return OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, r.u64[1]);
  case EventKind::MpiIrecv:
    return OTF2_EvtWriter_MpiIrecv(w, nullptr, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0], r.u64[1]);
  case EventKind::MpiRecv:
    return OTF2_EvtWriter_MpiRecv(w, nullptr, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0]);
  case EventKind::MpiRequestTest:
    return OTF2_EvtWriter_MpiRequestTest(w, nullptr, t, r.u64[1]);
  case EventKind::MpiRequestCancelled:
    return OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, t, r.u64[1]);
  case EventKind::MpiCollectiveBegin:
    return OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
  case EventKind::MpiCollectiveEnd:
    return OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, r.op, r.u32[1], r.u32[0], r.u64[0],
                                           r.u64[2]);
  case EventKind::MpiNbcRequest:
    return OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, t, r.u64[1]);
  case EventKind::MpiNbcComplete:
    return OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, t, r.op, r.u32[1], r.u32[0],
                                                        r.u64[0], r.u64[2], r.u64[1]);
  case EventKind::RmaWinCreate:
    return OTF2_EvtWriter_RmaWinCreate(w, nullptr, t, r.u32[2]);
  case EventKind::RmaWinDestroy:
    return OTF2_EvtWriter_RmaWinDestroy(w, nullptr, t, r.u32[2]);
  case EventKind::RmaCollectiveBegin:
    return OTF2_EvtWriter_RmaCollectiveBegin(w, nullptr, t);
  case EventKind::RmaCollectiveEnd:
    return OTF2_EvtWriter_RmaCollectiveEnd(w, nullptr, t, r.op,
                                           static_cast<OTF2_RmaSyncLevel>(r.u64[1]), r.u32[2],
                                           r.u32[0], r.u64[0], r.u64[2]);
  case EventKind::RmaGroupSync:
    return OTF2_EvtWriter_RmaGroupSync(w, nullptr, t, r.op, r.u32[2], r.u32[0]);
  case EventKind::RmaRequestLock:
    return OTF2_EvtWriter_RmaRequestLock(w, nullptr, t, r.u32[2], r.u32[0], r.u64[1], r.op);
  case EventKind::RmaReleaseLock:
    return OTF2_EvtWriter_RmaReleaseLock(w, nullptr, t, r.u32[2], r.u32[0], r.u64[1]);
  case EventKind::RmaSync:
    return OTF2_EvtWriter_RmaSync(w, nullptr, t, r.u32[2], r.u32[0], r.op);
  case EventKind::RmaPut:
    return OTF2_EvtWriter_RmaPut(w, nullptr, t, r.u32[2], r.u32[0], r.u64[0], r.u64[1]);
  case EventKind::RmaGet:
    return OTF2_EvtWriter_RmaGet(w, nullptr, t, r.u32[2], r.u32[0], r.u64[0], r.u64[1]);
  case EventKind::RmaAtomic:
    return OTF2_EvtWriter_RmaAtomic(w, nullptr, t, r.u32[2], r.u32[0], r.op, r.u64[0], r.u64[2],
                                    r.u64[1]);
  case EventKind::RmaOpCompleteBlocking:
    return OTF2_EvtWriter_RmaOpCompleteBlocking(w, nullptr, t, r.u32[2], r.u64[1]);
  case EventKind::RmaOpCompleteNonBlocking:
    return OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, nullptr, t, r.u32[2], r.u64[1]);
  case EventKind::RmaOpTest:
    return OTF2_EvtWriter_RmaOpTest(w, nullptr, t, r.u32[2], r.u64[1]);
  case EventKind::IoCreateHandle:
    return OTF2_EvtWriter_IoCreateHandle(w, nullptr, t, r.u32[2], r.op, r.u32[0],
                                         static_cast<OTF2_IoStatusFlag>(r.u64[0]));
  case EventKind::IoDestroyHandle:
    return OTF2_EvtWriter_IoDestroyHandle(w, nullptr, t, r.u32[2]);
  case EventKind::IoOperationBegin:
    return OTF2_EvtWriter_IoOperationBegin(w, nullptr, t, r.u32[2], r.op, r.u32[0], r.u64[0],
                                           r.u64[1]);
  case EventKind::IoOperationIssued:
    return OTF2_EvtWriter_IoOperationIssued(w, nullptr, t, r.u32[2], r.u64[1]);
  case EventKind::IoOperationTest:
    return OTF2_EvtWriter_IoOperationTest(w, nullptr, t, r.u32[2], r.u64[1]);
  case EventKind::IoOperationComplete:
    return OTF2_EvtWriter_IoOperationComplete(w, nullptr, t, r.u32[2], r.u64[0], r.u64[1]);
  case EventKind::IoSeek:
    return OTF2_EvtWriter_IoSeek(w, nullptr, t, r.u32[2], static_cast<std::int64_t>(r.u64[0]), r.op,
                                 r.u64[2]);
  case EventKind::IoDeleteFile:
    return OTF2_EvtWriter_IoDeleteFile(w, nullptr, t, 0 /* the one I/O paradigm: MPI-IO */,
                                       r.u32[0]);
  case EventKind::ThreadFork:
    return OTF2_EvtWriter_ThreadFork(w, nullptr, t, OTF2_PARADIGM_OPENMP, r.u32[0]);
  case EventKind::ThreadJoin:
    return OTF2_EvtWriter_ThreadJoin(w, nullptr, t, OTF2_PARADIGM_OPENMP);
  case EventKind::ThreadTeamBegin:
    return OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, t, r.u32[1]);
  case EventKind::ThreadTeamEnd:
    return OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, t, r.u32[1]);
  case EventKind::ThreadAcquireLock:
    return OTF2_EvtWriter_ThreadAcquireLock(w, nullptr, t, OTF2_PARADIGM_OPENMP, r.u32[0],
                                            r.u32[2]);
  case EventKind::ThreadReleaseLock:
    return OTF2_EvtWriter_ThreadReleaseLock(w, nullptr, t, OTF2_PARADIGM_OPENMP, r.u32[0],
                                            r.u32[2]);
  case EventKind::ThreadTaskCreate:
    return OTF2_EvtWriter_ThreadTaskCreate(w, nullptr, t, r.u32[1], r.u32[0], r.u32[2]);
  case EventKind::ThreadTaskSwitch:
    return OTF2_EvtWriter_ThreadTaskSwitch(w, nullptr, t, r.u32[1], r.u32[0], r.u32[2]);
  case EventKind::ThreadTaskComplete:
    return OTF2_EvtWriter_ThreadTaskComplete(w, nullptr, t, r.u32[1], r.u32[0], r.u32[2]);
  case EventKind::MeasurementOnOff:
    return OTF2_EvtWriter_MeasurementOnOff(w, nullptr, t,
                                           r.op != 0 ? OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF);
  }
  return OTF2_ERROR_INVALID_ARGUMENT;
}

} // namespace

std::uint64_t LocationAccess::buffered(const Location& loc) {
  std::uint64_t n = static_cast<std::uint64_t>(loc.cursor_ - loc.begin_);
  for (const auto& p : loc.pending_)
    n += p.second;
  return n;
}

void LocationAccess::discard(Location& loc) {
  const std::uint64_t n = buffered(loc);
  loc.events_recorded_ += n;
  loc.events_dropped_ += n;
  loc.pending_.clear();
  loc.cursor_ = loc.begin_;
}

void LocationAccess::on_full(Location& loc) {
  State& s = state();
  std::lock_guard<std::mutex> lock(loc.write_mutex_);
  switch (s.phase.load()) {
  case Phase::Recording:
    write_out(loc, s, /*mark_flush=*/true);
    return;
  case Phase::BeforeStart:
    // No archive yet (e.g. OpenMP before MPI_Init): keep the full buffer, start a new one.
    if (loc.pending_.size() <
        std::max<std::size_t>(3, kMaxPendingBytes / (loc.capacity_ * sizeof(EventRecord)))) {
      try {
        std::unique_ptr<EventRecord[]> fresh(new EventRecord[loc.capacity_]);
        loc.pending_.emplace_back(std::move(loc.buffer_), loc.capacity_);
        loc.buffer_ = std::move(fresh);
        loc.begin_ = loc.cursor_ = loc.buffer_.get();
        loc.end_ = loc.begin_ + loc.capacity_;
        return;
      } catch (const std::bad_alloc&) {
      }
    }
    if (loc.events_dropped_ == 0)
      log::warning("event buffer full before MPI_Init; dropping events of this thread until then "
                   "(raise HTRACE_BUFFER_SIZE)");
    loc.events_recorded_ += loc.capacity_;
    loc.events_dropped_ += loc.capacity_;
    loc.cursor_ = loc.begin_;
    return;
  default:
    loc.events_recorded_ += loc.capacity_;
    loc.events_dropped_ += loc.capacity_;
    loc.cursor_ = loc.begin_;
    return;
  }
}

void LocationAccess::write_out(Location& loc, State& s, bool mark_flush) {
  const clock::Stamp flush_begin = clock::stamp();
  if (s.failed.load() || !s.archive) {
    discard(loc);
    return;
  }
  auto* archive = reinterpret_cast<OTF2_Archive*>(s.archive);
  if (!loc.evt_writer_ && archive) loc.evt_writer_ = OTF2_Archive_GetEvtWriter(archive, loc.id_);
  auto* writer = static_cast<OTF2_EvtWriter*>(loc.evt_writer_);
  if (!writer) {
    s.fail("cannot create the event writer of location " + std::to_string(loc.id_));
    discard(loc);
    return;
  }
  clock::maybe_anchor(); // so that these stamps lie between anchors, not beyond the last one
  const clock::GlobalTimeMap map = s.current_map();
  TimeClamp to_global{map, loc.last_global_, loc.clamped_};
  t_being_written = &loc;

  bool ok = true;
  auto write_record = [&](const EventRecord& r) {
    if (!ok) {
      ++loc.events_dropped_;
      return;
    }
    const OTF2_TimeStamp t = to_global(r.time);
    const OTF2_ErrorCode rc = write_one(writer, r, t);
    if (rc != OTF2_SUCCESS) {
      ok = false;
      ++loc.events_dropped_;
      s.fail(std::string("writing events failed (") + OTF2_Error_GetName(rc) + ": " +
             OTF2_Error_GetDescription(rc) + "); the application continues untraced");
      return;
    }
    ++loc.events_written_;
    // Timestamps of a location never decrease (TimeClamp): the first one is its minimum.
    if (__builtin_expect(loc.min_global_ == INT64_MAX, 0))
      loc.min_global_ = static_cast<std::int64_t>(t);
  };
  auto write_flush_mark = [&]() {
    if (loc.flush_mark_begin_ < 0) return;
    const OTF2_TimeStamp t0 = to_global(loc.flush_mark_begin_);
    const OTF2_TimeStamp t1 = std::max<OTF2_TimeStamp>(
        t0, static_cast<OTF2_TimeStamp>(to_global.global(loc.flush_mark_end_)));
    loc.flush_mark_begin_ = loc.flush_mark_end_ = -1;
    if (!ok) return;
    const OTF2_ErrorCode rc = OTF2_EvtWriter_BufferFlush(writer, nullptr, t0, t1);
    if (rc != OTF2_SUCCESS) {
      ok = false;
      s.fail(std::string("writing a BufferFlush record failed (") + OTF2_Error_GetName(rc) + ")");
      return;
    }
    ++loc.events_written_;
    ++loc.flushes_;
    loc.min_global_ = std::min<std::int64_t>(loc.min_global_, static_cast<std::int64_t>(t0));
  };
  auto write_range = [&](const EventRecord* b, std::size_t n) {
    loc.events_recorded_ += n;
    for (std::size_t i = 0; i < n; ++i) {
      write_record(b[i]);
      if (i == 0) write_flush_mark(); // after the event that triggered the previous flush
    }
  };
  for (const auto& p : loc.pending_)
    write_range(p.first.get(), p.second);
  loc.pending_.clear();
  write_range(loc.begin_, static_cast<std::size_t>(loc.cursor_ - loc.begin_));
  loc.cursor_ = loc.begin_;
  write_flush_mark(); // a flush with no event after it (final write)
  if (loc.min_global_ != INT64_MAX) loc.max_global_ = std::max(loc.max_global_, loc.last_global_);

  if (ok && mark_flush) {
    loc.flush_mark_begin_ = flush_begin;
    loc.flush_mark_end_ = clock::stamp();
  }
  t_being_written = nullptr;
}

void LocationAccess::close_writer(Location& loc, State& s) {
  // After a write failure OTF2 cannot close the writer safely (it retries the failed flush on
  // freed chunks): the writer is abandoned with its archive.
  if (!loc.evt_writer_ || s.failed.load()) return;
  auto* archive = reinterpret_cast<OTF2_Archive*>(s.archive);
  t_being_written = &loc;
  const OTF2_ErrorCode rc =
      OTF2_Archive_CloseEvtWriter(archive, static_cast<OTF2_EvtWriter*>(loc.evt_writer_));
  t_being_written = nullptr;
  loc.evt_writer_ = nullptr;
  if (rc != OTF2_SUCCESS)
    s.fail(std::string("closing the event file failed (") + OTF2_Error_GetName(rc) + ": " +
           OTF2_Error_GetDescription(rc) + ")");
}

LocationAccess::Stats LocationAccess::stats(Location& loc) {
  return {loc.events_written_, loc.events_recorded_, loc.events_dropped_, loc.clamped_,
          loc.flushes_,        loc.min_global_,      loc.max_global_};
}

std::uint64_t LocationAccess::otf2_flush_end(Location* loc, State& s) {
  const std::int64_t now = s.current_map().to_global(clock::now());
  if (!loc) return static_cast<std::uint64_t>(std::max<std::int64_t>(now, 0));
  // OTF2 appends its own BufferFlush record after the flush: keep it monotonic and counted.
  const std::int64_t t = std::max(now, loc->last_global_);
  ++loc->events_written_;
  loc->max_global_ = std::max(loc->max_global_, t);
  return static_cast<std::uint64_t>(t);
}

Location* LocationAccess::being_written() {
  return t_being_written;
}

} // namespace htrace::record
