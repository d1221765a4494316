// Conversion of buffered records into OTF2 events, written to the location's event file. Runs on
// the owning thread when its buffer is full, or on the finalizing/emergency thread at the end;
// never on the per-event path.
#include "record/location_writer.h"

#include "clock/base_clock.h"
#include "common/log.h"
#include "format/event_file_encoder.h"
#include "record/archive.h"
#include "record/budget.h"
#include "record/global_defs.h"
#include "record/snapshot.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <new>
#include <otf2/otf2.h>

namespace htrace::record {
namespace {

// The location whose full buffer this thread converts (on_full). A SIGTERM or SIGINT it receives
// then is raised again when the conversion is done (defer_signal_during_own_flush): interrupted
// inside a record or a chunk write, the location cannot be written by the emergency flush, and
// that buffer would be lost.
thread_local LocationImpl* t_own_flush __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local volatile std::sig_atomic_t t_deferred_signal
    __attribute__((tls_model("initial-exec"))) = 0;

// Pre-start overflow keeps up to this many bytes of extra buffers per thread (at least 3
// buffers) before dropping events.
constexpr std::size_t kMaxPendingBytes = 48u << 20;

/// Global timestamp for OTF2 from a stamp (clock::stamp(): TSC or base-clock ns), never below
/// the previous one of this location (OTF2 rejects a decreasing timestamp); the clamp is counted
/// and its size kept: nanoseconds are conversion rounding, more is a clock model gone wrong.
struct TimeClamp {
  clock::StampConverter& global; ///< stamp -> base-clock ns -> global ns, fused
  std::int64_t& last;
  std::uint64_t& clamped;
  std::int64_t& largest;
  OTF2_TimeStamp operator()(clock::Stamp stamp) {
    std::int64_t g = global(stamp);
    if (g < last) {
      largest = std::max(largest, last - g);
      g = last;
      ++clamped;
    }
    last = g;
    return static_cast<OTF2_TimeStamp>(g);
  }
};

bool write_one(format::EventFileEncoder& w, const EventRecord& r, OTF2_TimeStamp t) {
  switch (r.kind) {
  case EventKind::Enter:
    return encode_Enter(w, t, r.u32[0]);
  case EventKind::Leave:
    return encode_Leave(w, t, r.u32[0]);
  case EventKind::MpiSend:
    return encode_MpiSend(w, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0]);
  case EventKind::MpiIsend:
    return encode_MpiIsend(w, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0], r.u64[1]);
  case EventKind::MpiIsendComplete:
    return encode_MpiIsendComplete(w, t, r.u64[1]);
  case EventKind::MpiIrecvRequest:
    return encode_MpiIrecvRequest(w, t, r.u64[1]);
  case EventKind::MpiIrecv:
    return encode_MpiIrecv(w, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0], r.u64[1]);
  case EventKind::MpiRecv:
    return encode_MpiRecv(w, t, r.u32[0], r.u32[1], r.u32[2], r.u64[0]);
  case EventKind::MpiRequestTest:
    return encode_MpiRequestTest(w, t, r.u64[1]);
  case EventKind::MpiRequestCancelled:
    return encode_MpiRequestCancelled(w, t, r.u64[1]);
  case EventKind::MpiCollectiveBegin:
    return encode_MpiCollectiveBegin(w, t);
  case EventKind::MpiCollectiveEnd:
    return encode_MpiCollectiveEnd(w, t, r.op, r.u32[1], r.u32[0], r.u64[0], r.u64[2]);
  case EventKind::MpiNbcRequest:
    return encode_NonBlockingCollectiveRequest(w, t, r.u64[1]);
  case EventKind::MpiNbcComplete:
    return encode_NonBlockingCollectiveComplete(w, t, r.op, r.u32[1], r.u32[0], r.u64[0], r.u64[2],
                                                r.u64[1]);
  case EventKind::RmaWinCreate:
    return encode_RmaWinCreate(w, t, r.u32[2]);
  case EventKind::RmaWinDestroy:
    return encode_RmaWinDestroy(w, t, r.u32[2]);
  case EventKind::RmaCollectiveBegin:
    return encode_RmaCollectiveBegin(w, t);
  case EventKind::RmaCollectiveEnd:
    return encode_RmaCollectiveEnd(w, t, r.op, static_cast<OTF2_RmaSyncLevel>(r.u64[1]), r.u32[2],
                                   r.u32[0], r.u64[0], r.u64[2]);
  case EventKind::RmaGroupSync:
    return encode_RmaGroupSync(w, t, r.op, r.u32[2], r.u32[0]);
  case EventKind::RmaRequestLock:
    return encode_RmaRequestLock(w, t, r.u32[2], r.u32[0], r.u64[1], r.op);
  case EventKind::RmaReleaseLock:
    return encode_RmaReleaseLock(w, t, r.u32[2], r.u32[0], r.u64[1]);
  case EventKind::RmaSync:
    return encode_RmaSync(w, t, r.u32[2], r.u32[0], r.op);
  case EventKind::RmaPut:
    return encode_RmaPut(w, t, r.u32[2], r.u32[0], r.u64[0], r.u64[1]);
  case EventKind::RmaGet:
    return encode_RmaGet(w, t, r.u32[2], r.u32[0], r.u64[0], r.u64[1]);
  case EventKind::RmaAtomic:
    return encode_RmaAtomic(w, t, r.u32[2], r.u32[0], r.op, r.u64[0], r.u64[2], r.u64[1]);
  case EventKind::RmaOpCompleteBlocking:
    return encode_RmaOpCompleteBlocking(w, t, r.u32[2], r.u64[1]);
  case EventKind::RmaOpCompleteNonBlocking:
    return encode_RmaOpCompleteNonBlocking(w, t, r.u32[2], r.u64[1]);
  case EventKind::RmaOpCompleteRemote:
    return encode_RmaOpCompleteRemote(w, t, r.u32[2], r.u64[1]);
  case EventKind::RmaOpTest:
    return encode_RmaOpTest(w, t, r.u32[2], r.u64[1]);
  case EventKind::IoCreateHandle:
    return encode_IoCreateHandle(w, t, r.u32[2], r.op, r.u32[0],
                                 static_cast<OTF2_IoStatusFlag>(r.u64[0]));
  case EventKind::IoDestroyHandle:
    return encode_IoDestroyHandle(w, t, r.u32[2]);
  case EventKind::IoOperationBegin:
    return encode_IoOperationBegin(w, t, r.u32[2], r.op, r.u32[0], r.u64[0], r.u64[1]);
  case EventKind::IoOperationIssued:
    return encode_IoOperationIssued(w, t, r.u32[2], r.u64[1]);
  case EventKind::IoOperationTest:
    return encode_IoOperationTest(w, t, r.u32[2], r.u64[1]);
  case EventKind::IoOperationComplete:
    return encode_IoOperationComplete(w, t, r.u32[2], r.u64[0], r.u64[1]);
  case EventKind::IoSeek:
    return encode_IoSeek(w, t, r.u32[2], static_cast<std::int64_t>(r.u64[0]), r.op, r.u64[2]);
  case EventKind::IoDeleteFile:
    return encode_IoDeleteFile(w, t, 0 /* the one I/O paradigm: MPI-IO */, r.u32[0]);
  case EventKind::ThreadFork:
    return encode_ThreadFork(w, t, OTF2_PARADIGM_OPENMP, r.u32[0]);
  case EventKind::ThreadJoin:
    return encode_ThreadJoin(w, t, OTF2_PARADIGM_OPENMP);
  case EventKind::ThreadTeamBegin:
    return encode_ThreadTeamBegin(w, t, r.u32[1]);
  case EventKind::ThreadTeamEnd:
    return encode_ThreadTeamEnd(w, t, r.u32[1]);
  case EventKind::ThreadAcquireLock:
    return encode_ThreadAcquireLock(w, t, OTF2_PARADIGM_OPENMP, r.u32[0], r.u32[2]);
  case EventKind::ThreadReleaseLock:
    return encode_ThreadReleaseLock(w, t, OTF2_PARADIGM_OPENMP, r.u32[0], r.u32[2]);
  case EventKind::ThreadTaskCreate:
    return encode_ThreadTaskCreate(w, t, r.u32[1], r.u32[0], r.u32[2]);
  case EventKind::ThreadTaskSwitch:
    return encode_ThreadTaskSwitch(w, t, r.u32[1], r.u32[0], r.u32[2]);
  case EventKind::ThreadTaskComplete:
    return encode_ThreadTaskComplete(w, t, r.u32[1], r.u32[0], r.u32[2]);
  case EventKind::MeasurementOnOff:
    return encode_MeasurementOnOff(w, t, r.op != 0 ? OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF);
  case EventKind::PollRunLeave:
    return w.attribute_uint64(t, kPollsAttribute, r.u64[0]) && encode_Leave(w, t, r.u32[0]);
  }
  return false;
}

} // namespace

std::uint64_t LocationAccess::buffered(const LocationImpl& loc) {
  std::uint64_t n =
      static_cast<std::uint64_t>(loc.cursor_.load(std::memory_order_acquire) - loc.begin_);
  for (const auto& p : loc.pending_)
    n += p.second;
  return n;
}

void LocationAccess::discard(LocationImpl& loc) {
  const std::uint64_t n = buffered(loc);
  loc.events_recorded_ += n;
  loc.events_dropped_ += n;
  loc.pending_.clear();
  loc.cursor_ = loc.begin_;
}

namespace {

/// Raises a SIGTERM or SIGINT that waited for the thread's own conversion (on_full,
/// convert_ahead), now that the buffer is on its way to the file and unlocked: the emergency flush
/// writes it. `event_lost`: the record that found the buffer full was not stored (the signal came
/// first); the emergency flush says so.
void raise_deferred_signal(bool event_lost) {
  if (const int sig = t_deferred_signal) {
    t_deferred_signal = 0;
    if (event_lost) state().deferred_signal_event_lost = true;
    std::raise(sig);
  }
}

} // namespace

// Both mark the conversion as the thread's own (t_own_flush) from before the lock is taken until
// after it is released: a SIGTERM or SIGINT in between waits for the conversion, instead of an
// emergency flush on this thread finding the location locked by the thread itself.
void LocationAccess::on_full(LocationImpl& loc) {
  t_own_flush = &loc;
  {
    std::lock_guard<std::mutex> lock(loc.write_mutex_);
    on_full_locked(loc);
  }
  t_own_flush = nullptr;
  raise_deferred_signal(/*event_lost=*/true);
}

void LocationAccess::convert_ahead(LocationImpl& loc) {
  State& s = state();
  if (s.phase.load(std::memory_order_relaxed) != Phase::Recording) return;
  t_own_flush = &loc;
  {
    // Another thread writing this location (finalize, an emergency flush) takes the buffer with
    // it; before the archive exists or after recording stopped the buffer stays as it is.
    std::unique_lock<std::mutex> lock(loc.write_mutex_, std::try_to_lock);
    if (lock.owns_lock() && s.phase.load() == Phase::Recording)
      write_out(loc, s, FlushMark::ChunkWrite);
  }
  t_own_flush = nullptr;
  raise_deferred_signal(/*event_lost=*/false);
}

bool LocationAccess::keep_full_buffer(LocationImpl& loc) {
  try {
    std::unique_ptr<EventRecord[]> fresh(new EventRecord[loc.capacity_]);
    loc.pending_.emplace_back(std::move(loc.buffer_), loc.capacity_);
    loc.buffer_ = std::move(fresh);
  } catch (const std::bad_alloc&) {
    return false;
  }
  loc.begin_ = loc.buffer_.get();
  loc.cursor_ = loc.begin_;
  loc.end_ = loc.begin_ + loc.capacity_;
  return true;
}

void LocationAccess::on_full_locked(LocationImpl& loc) {
  State& s = state();
  switch (s.phase.load()) {
  case Phase::Recording:
    write_out(loc, s, FlushMark::Conversion);
    return;
  case Phase::BeforeStart:
    // No archive yet (e.g. OpenMP before MPI_Init): keep the full buffer, start a new one.
    if (loc.pending_.size() <
            std::max<std::size_t>(3, kMaxPendingBytes / (loc.capacity_ * sizeof(EventRecord))) &&
        keep_full_buffer(loc))
      return;
    if (loc.events_dropped_ == 0)
      log::warning("event buffer full before MPI_Init; dropping events of this thread until then "
                   "(raise HTRACE_BUFFER_SIZE)");
    break;
  default:
    // Stopped, while finalize() or an emergency flush on another thread may still write this
    // location: the buffer that fills first holds the events up to the stop and is kept; the
    // events after it are dropped, the current buffer's included, so what is written stays a
    // prefix of what the thread did, without a gap.
    if (!loc.cut_ && loc.pending_.empty() && keep_full_buffer(loc)) return;
    loc.cut_ = true;
    break;
  }
  loc.events_recorded_ += loc.capacity_;
  loc.events_dropped_ += loc.capacity_;
  loc.cursor_ = loc.begin_;
}

namespace {

/// The location's event file, created on first use; nullptr (and recording stopped) if it cannot.
format::EventFileEncoder* event_file(State& s, LocationId id,
                                     std::unique_ptr<format::EventFileEncoder>& file) {
  if (file) return file.get();
  auto created =
      std::unique_ptr<format::EventFileEncoder>(new (std::nothrow) format::EventFileEncoder);
  if (!created) {
    s.fail("out of memory for the event file of location " + std::to_string(id));
    return nullptr;
  }
  // Events reach the file only after the definitions they use (the salvage snapshot).
  if (!created->open(event_file_path(s, id), archive_event_chunk_size(),
                     snapshot::refresh_from_flush)) {
    s.fail("cannot create the event file '" + created->path() +
           "': " + std::strerror(created->error()) + "; the application continues untraced");
    return nullptr;
  }
  file = std::move(created);
  return file.get();
}

void fail_writing(State& s, const format::EventFileEncoder& file) {
  s.fail(std::string("writing the trace archive failed (") + std::strerror(file.error()) + ": '" +
         file.path() + "'); the application continues untraced");
}

} // namespace

clock::StampConverter& LocationAccess::converter(LocationImpl& loc, State& s) {
  const std::uint32_t version = s.map_version.load(std::memory_order_acquire);
  if (!loc.converter_ || !loc.converter_->current() || loc.converter_map_version_ != version) {
    loc.converter_.emplace(s.current_map());
    loc.converter_map_version_ = version;
  }
  return *loc.converter_;
}

void LocationAccess::write_out(LocationImpl& loc, State& s, FlushMark mark) {
  const clock::Stamp flush_begin = mark == FlushMark::Conversion ? clock::stamp() : 0;
  if (s.failed.load() || !s.archive) {
    discard(loc);
    return;
  }
  format::EventFileEncoder* file = event_file(s, loc.id_, loc.evt_file_);
  if (!file) {
    discard(loc);
    return;
  }
  // So that these stamps lie between anchors, not beyond the last one; the newest record's stamp
  // stands for now.
  const EventRecord* newest = loc.cursor_.load(std::memory_order_acquire);
  const clock::Stamp newest_stamp = newest != loc.begin_ ? newest[-1].time : clock::stamp();
  if (newest != loc.begin_) loc.newest_written_.store(newest_stamp, std::memory_order_relaxed);
  clock::maybe_anchor(newest_stamp);
  TimeClamp to_global{LocationAccess::converter(loc, s), loc.last_global_, loc.clamped_,
                      loc.largest_clamp_};
  const std::uint64_t chunks_before = file->chunks_written();

  bool ok = true;
  auto write_record = [&](const EventRecord& r) {
    if (!ok) {
      ++loc.events_dropped_;
      return;
    }
    const OTF2_TimeStamp t = to_global(r.time);
    if (!write_one(*file, r, t)) {
      ok = false;
      ++loc.events_dropped_;
      fail_writing(s, *file);
      return;
    }
    ++loc.events_written_;
    // Timestamps of a location never decrease (TimeClamp): the first one is its minimum.
    if (__builtin_expect(loc.min_global_ == INT64_MAX, 0))
      loc.min_global_ = static_cast<std::int64_t>(t);
  };
  // [t0, end], cut at `before` (the time of the event written next, when known): the records of
  // a call written after its Enter may carry the Enter's time, and no event may precede the end
  // of the flush before it.
  // Returns the end it wrote.
  auto encode_flush_mark = [&](OTF2_TimeStamp t0, clock::Stamp end,
                               OTF2_TimeStamp before = UINT64_MAX) {
    const OTF2_TimeStamp t1 = std::max<OTF2_TimeStamp>(
        t0, std::min(before, static_cast<OTF2_TimeStamp>(to_global.global(end))));
    if (!encode_BufferFlush(*file, t0, t1)) {
      ok = false;
      fail_writing(s, *file);
      return t1;
    }
    ++loc.events_written_;
    ++loc.flushes_;
    loc.min_global_ = std::min<std::int64_t>(loc.min_global_, static_cast<std::int64_t>(t0));
    loc.flush_end_global_ = static_cast<std::int64_t>(t1);
    return t1;
  };
  // `after_trigger`: right after the event whose append found the buffer full. The record then
  // takes that event's time (the flush began nanoseconds later) and needs no timestamp record of
  // its own: 9 bytes less per flush.
  auto write_flush_mark = [&](bool after_trigger, const EventRecord* next) {
    if (loc.flush_mark_begin_ < 0) return;
    const OTF2_TimeStamp t0 = after_trigger ? static_cast<OTF2_TimeStamp>(to_global.last)
                                            : to_global(loc.flush_mark_begin_);
    const clock::Stamp end = loc.flush_mark_end_;
    loc.flush_mark_begin_ = loc.flush_mark_end_ = -1;
    if (ok)
      encode_flush_mark(
          t0, end, next ? static_cast<OTF2_TimeStamp>(to_global.global(next->time)) : UINT64_MAX);
  };
  auto write_range = [&](const EventRecord* b, std::size_t n) {
    loc.events_recorded_ += n;
    for (std::size_t i = 0; i < n; ++i) {
      write_record(b[i]);
      // After the event that triggered the previous flush.
      if (i == 0) write_flush_mark(ok, n > 1 ? &b[1] : nullptr);
    }
  };
  for (const auto& p : loc.pending_)
    write_range(p.first.get(), p.second);
  loc.pending_.clear();
  // Acquire: records another thread published are whole (Location::publish()).
  const auto current =
      static_cast<std::size_t>(loc.cursor_.load(std::memory_order_acquire) - loc.begin_);
  if (loc.cut_) { // events after a buffer dropped while stopped: not written (on_full_locked)
    loc.events_recorded_ += current;
    loc.events_dropped_ += current;
  } else {
    write_range(loc.begin_, current);
  }
  loc.cursor_ = loc.begin_;
  write_flush_mark(false, nullptr); // a flush with no event after it (final write)
  if (loc.min_global_ != INT64_MAX) loc.max_global_ = std::max(loc.max_global_, loc.last_global_);

  if (!ok) return;
  if (mark == FlushMark::Conversion) {
    loc.flush_mark_begin_ = flush_begin;
    loc.flush_mark_end_ = clock::stamp();
  } else if (mark == FlushMark::ChunkWrite && file->chunks_written() != chunks_before) {
    // From the last event (the Enter of the call that converts ahead) to now. Every record the
    // call writes later is stamped later: the wrappers that convert ahead write nothing at their
    // entry time after the PMPI call (gen_wrappers.py, MAY_WAIT).
    const OTF2_TimeStamp end =
        encode_flush_mark(static_cast<OTF2_TimeStamp>(to_global.last), clock::stamp());
    // The next conversion may use a converter with a newer anchor, which can place the next
    // stamp nanoseconds before the end computed here: no event may precede the flush's end.
    to_global.last = std::max(to_global.last, static_cast<std::int64_t>(end));
  }
  // HTRACE_BUDGET: what this conversion added to the file. The newest event converted is where
  // recording stops; the producers finish the calls in progress.
  const std::uint64_t file_size = file->file_size();
  const bool reached = s.budget.add(file_size - loc.budget_counted_, mark != FlushMark::None);
  loc.budget_counted_ = file_size;
  if (reached) reach_budget(s, newest_stamp);
}

void LocationAccess::end_at_budget(LocationImpl& loc, State& s) {
  if (s.failed.load() || !s.archive) return;
  format::EventFileEncoder* file = event_file(s, loc.id_, loc.evt_file_);
  if (!file) return;
  // At the cut, or right after the location's last event when that came later (a call that was
  // in progress at the cut), and never inside the BufferFlush before it: not a clamp, so not
  // counted as one.
  const std::int64_t t =
      std::max({converter(loc, s)(s.budget.cut()), loc.last_global_, loc.flush_end_global_});
  if (!encode_MeasurementOnOff(*file, static_cast<OTF2_TimeStamp>(t), OTF2_MEASUREMENT_OFF)) {
    fail_writing(s, *file);
    return;
  }
  ++loc.events_written_;
  loc.last_global_ = t;
  loc.min_global_ = std::min(loc.min_global_, t);
  loc.max_global_ = std::max(loc.max_global_, t);
  const std::uint64_t file_size = file->file_size();
  s.budget.add(file_size - loc.budget_counted_, /*may_reach=*/false);
  loc.budget_counted_ = file_size;
}

void LocationAccess::close_writer(LocationImpl& loc, State& s) {
  // After a write failure the file keeps its complete chunks (salvageable) and stays unfinished.
  if (!loc.evt_file_ || s.failed.load()) return;
  if (!loc.evt_file_->finish()) fail_writing(s, *loc.evt_file_);
  loc.evt_file_.reset();
}

LocationAccess::Stats LocationAccess::stats(LocationImpl& loc) {
  return {loc.events_written_, loc.events_recorded_, loc.events_dropped_, loc.clamped_,
          loc.flushes_,        loc.min_global_,      loc.max_global_,     loc.largest_clamp_};
}

LocationImpl* LocationAccess::own_flush() {
  return t_own_flush;
}

bool defer_signal_during_own_flush(int sig) {
  if (!t_own_flush) return false;
  t_deferred_signal = sig;
  return true;
}

} // namespace htrace::record
