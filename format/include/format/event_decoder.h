// Reads a location's events straight from its event file, as an alternative to OTF2's reader,
// which decodes every field of every record: here only the fields of the record types that have a
// callback are decoded, and every other event yields just its time and type. Every record is still
// checked as OTF2's reader checks it (each field's encoding, attribute lists), so a file the
// decoder accepts is one OTF2 reads, and a copy of it is readable too. Valid for event files
// event_file.h can parse (POSIX substrate, no compression, little-endian) whose location has no
// clock offsets in its local definitions (OTF2's reader would apply them to the times, this
// decoder does not; see ArchiveReader::decodable). Its mapping tables are applied as OTF2's reader
// applies them, given as IdMaps.
#ifndef HTRACE_FORMAT_EVENT_DECODER_H
#define HTRACE_FORMAT_EVENT_DECODER_H

#include "event_decode.inc" // EventDecodeCallbacks (generated from the OTF2 headers)

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <otf2/otf2.h>
#include <utility>
#include <vector>

namespace htrace::format {

// Receives the events of the types without a callback: time and type (record_tables.h
// numbering; types this OTF2 library does not know have numbers >= event_record_type_count()).
using OtherEventFn = void (*)(void* user, OTF2_TimeStamp time, int type);

// Why decoding stopped before the end of the file, and at which byte of it.
struct DecodeError {
  const char* why = nullptr; // nullptr: every event was decoded
  size_t offset = 0;
  explicit operator bool() const { return why != nullptr; }
};

// A location's mapping tables (its local definitions), applied to the fields of its events as
// OTF2's reader applies them: a field of a type with a table takes the table's global id for its
// value, or keeps its value if the table has none for it (OTF2_IdMap_GetGlobalId).
class IdMaps {
public:
  // Copies `map` as the table of `type`; false if `type` has one already, is unknown, or `map`
  // lists a local id twice (then the location is left to OTF2's reader).
  bool set(OTF2_MappingType type, const OTF2_IdMap* map);
  // The same from (local, global) pairs in any order.
  bool set(OTF2_MappingType type, std::vector<std::pair<uint64_t, uint64_t>> pairs);
  bool empty() const { return tables_ == nullptr; }
  uint64_t map(OTF2_MappingType type, uint64_t id) const {
    if (!tables_) return id;
    const Table& t = (*tables_)[type];
    if (!t.sparse.empty()) return sparse_lookup(t, id);
    return id < t.dense.size() ? t.dense[id] : id;
  }

private:
  // Dense: global id by local id (identity where the table has none), or sorted pairs.
  struct Table {
    bool present = false;
    std::vector<uint64_t> dense;
    std::vector<std::pair<uint64_t, uint64_t>> sparse;
  };
  static uint64_t sparse_lookup(const Table& t, uint64_t id);
  // Allocated with the first table: a reader keeps one IdMaps per location, most of them empty.
  std::unique_ptr<std::array<Table, OTF2_MAPPING_MAX>> tables_;
};

// Calls, in event order, the callback of each event's type with the fields OTF2's reader would
// pass (attribute lists: nullptr) and `user`, or `other`. Returns an empty DecodeError after the
// last event, else why it stopped: malformed data, or a callback that did not return
// OTF2_CALLBACK_SUCCESS. `chunk_size` is the archive's event chunk size. `maps`, if not null, are
// the location's mapping tables.
DecodeError decode_event_file(const uint8_t* data, size_t size, size_t chunk_size,
                              const EventDecodeCallbacks& callbacks, OtherEventFn other,
                              OTF2_LocationRef location, void* user, const IdMaps* maps = nullptr);

struct RawEvent;

// Decodes one event of an event file as decode_event_file decodes each (for readers that interleave
// the events of many files). `file`: the start of the file, for the error's offset; `position`: the
// event's number in its file, from 1. `metric`, if set, gets Metric records, which the generated
// callbacks leave out (their fields are arrays); without it they go to `other`.
DecodeError decode_event(const RawEvent& event, const uint8_t* file, uint64_t position,
                         const EventDecodeCallbacks& callbacks, OtherEventFn other,
                         OTF2_LocationRef location, void* user, const IdMaps* maps = nullptr,
                         OTF2_EvtReaderCallback_Metric metric = nullptr);

} // namespace htrace::format
#endif
