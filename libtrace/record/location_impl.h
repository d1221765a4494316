// The recorder's part of a location (not a public header): the buffer it owns, its event file,
// the buffers kept before start() or after the stop, statistics and the stamp converter. The
// owning thread's hot path touches only the Location base (recorder.h); everything here belongs to
// the writer (location_writer.cpp) and is guarded by write_mutex_.
#pragma once

#include "clock/base_clock.h"
#include "record/recorder.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace htrace::format {
class EventFileEncoder;
}

namespace htrace::record {

/// Every Location is one of these: the recorder creates them (location.cpp), and only they can
/// construct the Location base, so the downcast impl() is always valid.
class LocationImpl final : public Location {
public:
  explicit LocationImpl(std::size_t capacity);
  ~LocationImpl();

private:
  friend struct LocationAccess; // the only reader and writer of these fields

  std::unique_ptr<EventRecord[]> buffer_; ///< [begin_, end_) of the Location base
  std::size_t capacity_ = 0;
  std::uint32_t index_ = 0; ///< thread index k (0 = the thread that called start())
  LocationId id_ = 0;       ///< (index << 32) | world rank, final after start()
  std::unique_ptr<format::EventFileEncoder> evt_file_; ///< created by the first write_out
  std::mutex write_mutex_; ///< serialises conversion to OTF2 (owner vs finalize/emergency)
  /// Buffers that filled up before start() (kept and written when the archive exists), or the
  /// first one that filled up after recording stopped (written by finalize or an emergency flush).
  std::vector<std::pair<std::unique_ptr<EventRecord[]>, std::size_t>> pending_;
  bool cut_ = false; ///< events were dropped after recording stopped: later ones are not written

  // Statistics and time bookkeeping, guarded by write_mutex_.
  std::int64_t last_global_ = 0; ///< last timestamp written (global ns), for the clamp
  /// The last conversion's stamp converter and the global time map version it was made for.
  std::optional<clock::StampConverter> converter_;
  std::uint32_t converter_map_version_ = 0;
  std::int64_t min_global_ = INT64_MAX;
  std::int64_t max_global_ = INT64_MIN;
  std::uint64_t events_written_ = 0; ///< OTF2 records written, BufferFlush records included
  std::uint64_t events_recorded_ = 0;
  std::uint64_t events_dropped_ = 0;
  std::uint64_t clamped_ = 0;
  std::int64_t largest_clamp_ = 0; ///< ns the farthest clamped timestamp went back
  std::uint64_t flushes_ = 0;
  std::uint64_t budget_counted_ = 0; ///< bytes of the event file counted toward HTRACE_BUDGET
  std::atomic<LocalTime> newest_written_{0}; ///< stamp of the newest event written out
  /// Local [begin, end] of the last flush, written as a BufferFlush record right after the event
  /// whose append triggered it (that event's timestamp precedes the flush); -1 when none.
  std::int64_t flush_mark_begin_ = -1;
  std::int64_t flush_mark_end_ = -1;
  std::int64_t flush_end_global_ = INT64_MIN; ///< end of the last BufferFlush written (global ns)
};

inline LocationImpl& impl(Location& loc) {
  return static_cast<LocationImpl&>(loc);
}
inline const LocationImpl& impl(const Location& loc) {
  return static_cast<const LocationImpl&>(loc);
}

} // namespace htrace::record
