// Reads a location's events straight from its event file, as an alternative to OTF2's reader,
// which decodes every field of every record: here only the fields of the record types that have a
// callback are decoded, and every other event yields just its time and type. Every record is still
// checked as OTF2's reader checks it (each field's encoding, attribute lists), so a file the
// decoder accepts is one OTF2 reads, and a copy of it is readable too. Valid for event files
// event_file.h can parse (POSIX substrate, no compression, little-endian) whose location has no
// mapping tables or clock offsets in its local definitions: OTF2's reader would apply them to the
// fields and times, this decoder does not (see ArchiveReader::decodable).
#ifndef HTRACE_FORMAT_EVENT_DECODER_H
#define HTRACE_FORMAT_EVENT_DECODER_H

#include "event_decode.inc" // EventDecodeCallbacks (generated from the OTF2 headers)

#include <cstddef>
#include <cstdint>
#include <otf2/otf2.h>

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

// Calls, in event order, the callback of each event's type with the fields OTF2's reader would
// pass (attribute lists: nullptr) and `user`, or `other`. Returns an empty DecodeError after the
// last event, else why it stopped: malformed data, or a callback that did not return
// OTF2_CALLBACK_SUCCESS. `chunk_size` is the archive's event chunk size.
DecodeError decode_event_file(const uint8_t* data, size_t size, size_t chunk_size,
                              const EventDecodeCallbacks& callbacks, OtherEventFn other,
                              OTF2_LocationRef location, void* user);

} // namespace htrace::format
#endif
