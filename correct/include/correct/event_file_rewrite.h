// Rewriting an event file for a correction that changes timestamps only. Through the OTF2 library
// every record must be decoded and encoded again; here each record's bytes are copied as they are
// (format/event_file.h reads them) and only the timestamp records are written anew. A copy is
// kept only if the parser agrees with the read of the location on every event of the file
// (rewrite_event_file checks it on the way: OTF2's reader's view, or for a location the
// event-file decoder read, the file as it was then); otherwise the engine reads the location's
// records again and writes them through the library (record_store.h).
#ifndef HTRACE_CORRECT_EVENT_FILE_REWRITE_H
#define HTRACE_CORRECT_EVENT_FILE_REWRITE_H

#include "correct/time_source.h"
#include "format/event_file.h"
#include "format/event_file_encoder.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace htrace::correct {

// How many events of each record type (record_tables.h numbering) the read of one location saw;
// types without events are left out.
using TypeCounts = std::vector<std::pair<int, uint64_t>>;

// Writes an event file chunk by chunk from records and their (new) timestamps: the tracer's
// encoder (format/event_file_encoder.h), with errors thrown.
class EventFileWriter {
public:
  // `created`: the file, if already created (format::FileCreateAhead; the writer's from now on).
  EventFileWriter(const std::string& path, size_t chunk_size, int created = -1); // throws

  // Appends one event (its bytes as format::RawEvent holds them) at `time`, which must not go back.
  void add(int64_t time, const uint8_t* record, size_t size) {
    if (!file_.append_encoded(static_cast<OTF2_TimeStamp>(time), record, size)) fail();
  }
  // Ends the file; throws std::runtime_error on a write error.
  void finish();

private:
  [[noreturn]] void fail() const;

  format::EventFileEncoder file_;
};

// Copies the event file `in` (its bytes) to `out` with the timestamps `times` produces for the
// location it has begun. Returns the last timestamp written (0 for none), or nothing, with `out`
// removed, if the file does not hold exactly the events the read saw: as many, with the input times
// of `times` in the same order, and as many of each type as `expected` (a layout this parser does
// not know, clock offsets OTF2's reader applied, or a file that changed). Throws std::runtime_error
// naming the file if `out` cannot be written. `out_created`: `out` already created, as for
// EventFileWriter.
std::optional<int64_t> rewrite_event_file(const format::MappedFile& in, const std::string& out,
                                          size_t chunk_size, TimeSource& times,
                                          const TypeCounts& expected, int out_created = -1);

} // namespace htrace::correct
#endif
