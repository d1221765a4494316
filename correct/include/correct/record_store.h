// In-memory store of one location's event records, so htrace-correct reads the input archive once:
// the read pass keeps every record here, the write pass re-emits them with corrected timestamps.
//
// Layout: records are packed back to back, each one type byte (bit 7: attribute list follows),
// the callback's fields in order (memcpy, unaligned), array fields as their elements (length =
// the preceding numberOf* field), then, if flagged, the attribute list as a uint32 count and
// (uint32 ref, uint8 type, 8-byte value) per attribute. A record never straddles two blocks.
// The per-type store functions are generated (event_store.inc, tools/generate_record_tables.py).
#ifndef HTRACE_CORRECT_RECORD_STORE_H
#define HTRACE_CORRECT_RECORD_STORE_H

#include "correct/event_array.h"
#include "correct/input_times.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <otf2/otf2.h>
#include <vector>

namespace htrace::correct {

// Append-only arena holding one location's event records in large blocks; blocks never move, so
// growth never copies and appending is a bounds check plus memcpy.
class RecordStore {
public:
  RecordStore() = default;
  ~RecordStore();
  RecordStore(RecordStore&& other) noexcept;
  RecordStore& operator=(RecordStore&& other) noexcept;
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  size_t records() const { return records_; }
  // Bytes of stored records (what the records themselves occupy).
  size_t bytes() const;
  // Bytes of memory allocated for the blocks (>= bytes()).
  size_t capacity_bytes() const;

  // Appending, used by the generated store_* functions: begin_record returns room for `size`
  // contiguous bytes, end_record takes the pointer one past what was written.
  uint8_t* begin_record(size_t size) {
    if (static_cast<size_t>(end_ - cur_) < size) start_block(size);
    return cur_;
  }
  void end_record(uint8_t* next) {
    cur_ = next;
    ++records_;
  }

  // Read access for the write pass: the filled part of block i.
  size_t block_count() const { return blocks_.size(); }
  const uint8_t* block_begin(size_t i) const { return blocks_[i].data; }
  const uint8_t* block_end(size_t i) const;

  static constexpr size_t kBlockSize = size_t(2) << 20; // few allocations, little slack

private:
  struct Block {
    uint8_t* data;
    size_t used;     // valid once a later block was started; the last block ends at cur_
    size_t capacity; // bytes mapped at data
  };
  void start_block(size_t min_size);
  void release();

  std::vector<Block> blocks_;
  uint8_t* cur_ = nullptr;
  uint8_t* end_ = nullptr;
  size_t records_ = 0;
};

// userData of the store callbacks: every record appends its timestamp to *times and, when
// store != nullptr, the record itself to *store (store == nullptr: times only). When counts is
// set, counts[type] is incremented (format::event_record_type_count() entries, record_tables.h
// numbering).
struct EventStoreSink {
  InputTimes* times = nullptr;
  RecordStore* store = nullptr;
  uint64_t* counts = nullptr;
};

// Registers a callback for EVERY OTF2 event record type (generated) that stores into the
// EventStoreSink* passed as userData. Callers then override some types with their own callbacks
// (and call the matching store_<Name> of event_store.inc from them).
void register_store_events(OTF2_EvtReaderCallbacks* callbacks);

// Writes the stored records of one location in order, over as many calls as the caller likes:
// the corrected timestamps are produced a chunk at a time. Adds 1 to counts[type] per record
// (counts has format::event_record_type_count() entries, same type numbering as record_tables.h).
class StoredEventWriter {
public:
  StoredEventWriter(const RecordStore& store, OTF2_EvtWriter* writer, uint64_t* counts);
  ~StoredEventWriter();
  StoredEventWriter(const StoredEventWriter&) = delete;
  StoredEventWriter& operator=(const StoredEventWriter&) = delete;

  // Writes the next n records, record k with timestamp times[k]. Returns the first OTF2 error,
  // or OTF2_SUCCESS; OTF2_ERROR_INVALID_ARGUMENT if fewer than n records are left.
  OTF2_ErrorCode write(const int64_t* times, size_t n);
  size_t remaining() const { return store_.records() - written_; }

private:
  struct Scratch; // reusable attribute list and array buffers
  const RecordStore& store_;
  OTF2_EvtWriter* writer_;
  uint64_t* counts_;
  std::unique_ptr<Scratch> scratch_;
  size_t block_ = 0, written_ = 0;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
};

// Writes every stored record of one location, record i with timestamp times[i];
// OTF2_ERROR_INVALID_ARGUMENT if n differs from the number of stored records.
OTF2_ErrorCode write_stored_events(const RecordStore& store, const int64_t* times, size_t n,
                                   OTF2_EvtWriter* writer, uint64_t* counts);

namespace store_detail {

constexpr uint8_t kHasAttributes = 0x80;
constexpr size_t kAttributeBytes = sizeof(OTF2_AttributeRef) + sizeof(OTF2_Type) + 8;
static_assert(sizeof(OTF2_AttributeValue) == 8, "attribute values are stored in 8 bytes");

inline uint32_t attribute_count(OTF2_AttributeList* attributes) {
  return attributes ? OTF2_AttributeList_GetNumberOfElements(attributes) : 0;
}
inline size_t attribute_bytes(uint32_t count) {
  return count ? sizeof(uint32_t) + count * kAttributeBytes : 0;
}
template <class T> inline uint8_t* put(uint8_t* p, T value) {
  std::memcpy(p, &value, sizeof value);
  return p + sizeof value;
}
template <class T> inline uint8_t* put_array(uint8_t* p, const T* values, size_t n) {
  if (n) std::memcpy(p, values, n * sizeof(T)); // values may be null when n == 0
  return p + n * sizeof(T);
}
// Appends `count` (> 0) attributes of the list.
uint8_t* put_attributes(uint8_t* p, OTF2_AttributeList* attributes, uint32_t count);

} // namespace store_detail
} // namespace htrace::correct
#endif
