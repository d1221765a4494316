// Turns a thread's buffered records into OTF2 events for its location (not a public header).
#pragma once

#include "record/recorder_state.h"

#include <cstdint>
#include <mutex>

namespace htrace::record {

struct LocationAccess {
  /// The hot path's slow branch: the buffer is full.
  static void on_full(LocationImpl& loc);
  static void on_full_locked(LocationImpl& loc); ///< caller holds loc's write mutex
  /// Location::convert_while_waiting(): converts the buffer now if the location is recording and
  /// no other thread is writing it (then it stays for later).
  static void convert_ahead(LocationImpl& loc);
  /// Keeps the full buffer as pending and gives the location a fresh one; false if memory is short.
  static bool keep_full_buffer(LocationImpl& loc);
  /// Which BufferFlush record write_out() leaves in the trace for its own time.
  enum class FlushMark {
    None,       ///< the final writes (finalize, emergency)
    Conversion, ///< a full buffer: the whole conversion stalled the thread
    ChunkWrite, ///< a conversion ahead: marked only when it wrote a chunk to the file
  };
  /// Writes pending buffers and the current buffer, then resets it. Caller holds loc's write
  /// mutex.
  static void write_out(LocationImpl& loc, State& s, FlushMark mark);
  /// The location's stamp converter, kept from one conversion to the next while the anchors and
  /// the global time map stay the same: a new one costs the map's lock, a search over the anchors
  /// and a division, as much as converting a few records. Caller holds loc's write mutex.
  static clock::StampConverter& converter(LocationImpl& loc, State& s);
  /// After HTRACE_BUDGET was reached, following the final write_out(): ends the location's events
  /// with a MeasurementOnOff (off) record at the cut. Caller holds loc's write mutex.
  static void end_at_budget(LocationImpl& loc, State& s);
  /// Ends the location's event file (complete and closed afterwards).
  static void close_writer(LocationImpl& loc, State& s);
  /// Drops everything buffered (tracing disabled), counting it.
  static void discard(LocationImpl& loc);

  static std::mutex& write_mutex(LocationImpl& loc) { return loc.write_mutex_; }
  static void set_identity(LocationImpl& loc, std::uint32_t index, LocationId id) {
    loc.index_ = index;
    loc.id_ = id;
  }
  static std::uint32_t index(const LocationImpl& loc) { return loc.index_; }
  static LocationId id(const LocationImpl& loc) { return loc.id_; }
  static std::uint64_t buffered(const LocationImpl& loc);
  static LocalTime newest_written(const LocationImpl& loc) {
    return loc.newest_written_.load(std::memory_order_relaxed);
  }

  struct Stats {
    std::uint64_t events_written, events_recorded, events_dropped, clamped, flushes;
    std::int64_t min_global, max_global, largest_clamp;
  };
  static Stats stats(LocationImpl& loc); ///< caller holds loc's write mutex
  /// The location whose full buffer the calling thread converts (on_full), nullptr if none.
  static LocationImpl* own_flush();
};

} // namespace htrace::record
