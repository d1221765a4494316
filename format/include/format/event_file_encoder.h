// Writes one location's OTF2 event file directly, chunk by chunk, in the encoding the OTF2 library
// writes and reads (format version 2; the layout is described in format/event_file.h). Going
// through OTF2's event writer costs ~10 ns per event, and its POSIX layer collects 4 MiB per file
// before one write(), a stall of the order of 1 ms in the application's thread (measured orders
// of magnitude). Here every full chunk goes out in one write() of the chunk size (256 KiB, ~60 us
// per write), and the encoders (event_encode.inc) are generated from the OTF2 headers. Not
// installed.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <otf2/otf2.h>
#include <string>

namespace htrace::format {

class EventFileEncoder {
public:
  EventFileEncoder() = default;
  ~EventFileEncoder();
  EventFileEncoder(const EventFileEncoder&) = delete;
  EventFileEncoder& operator=(const EventFileEncoder&) = delete;

  /// Creates the file (truncating it) with chunks of `chunk_size` bytes, the archive's event
  /// chunk size; `before_write`, if set, runs before each write to the file. False, with error()
  /// set, if it cannot. `created`, if not -1, is the file already created and open for writing
  /// (its descriptor is the encoder's from now on).
  bool open(const std::string& path, std::size_t chunk_size, void (*before_write)() = nullptr,
            int created = -1);
  /// From now on, the kernel is asked to start writing each full chunk to disk as soon as it is
  /// written (sync_file_range), so a later fsync of the file waits only for the last ones.
  void write_behind() { write_behind_ = true; }

  /// Where the fields of the next event go, at most `max_fields` bytes: after its timestamp record
  /// (when the time changed or a chunk begins), id and, unless `singleton`, its length byte. May
  /// write the current chunk out first; nullptr once writing has failed.
  std::uint8_t* begin_record(OTF2_TimeStamp time, std::uint8_t id, bool sized,
                             std::size_t max_fields) {
    std::uint8_t* p = reserve(time, 2 + max_fields);
    if (p == nullptr) return nullptr;
    *p++ = id;
    length_ = sized ? p++ : nullptr;
    return p;
  }
  /// Ends the event whose fields end at `end`.
  void end_record(std::uint8_t* end) {
    if (length_) *length_ = static_cast<std::uint8_t>(end - length_ - 1);
    pos_ = static_cast<std::size_t>(end - chunk_.get());
    ++events_;
  }

  /// An attribute list of one uint64 value for the event the caller encodes next, at the same
  /// `time`. The list belongs to that event, so the chunk keeps room for any event after it.
  /// False once writing has failed.
  bool attribute_uint64(OTF2_TimeStamp time, std::uint32_t attribute, std::uint64_t value);

  /// Appends an event already in OTF2's encoding (any attribute list, its id, length and fields:
  /// `size` bytes) at `time`. False once writing has failed, or with error() E2BIG for an event
  /// larger than a chunk can hold.
  bool append_encoded(OTF2_TimeStamp time, const std::uint8_t* event, std::size_t size) {
    if (size > max_encoded_size()) {
      error_ = E2BIG;
      return false;
    }
    std::uint8_t* p = reserve(time, size);
    if (p == nullptr) return false;
    std::memcpy(p, event, size);
    length_ = nullptr;
    end_record(p + size);
    return true;
  }

  /// Writes the last chunk with OTF2's end-of-file mark and closes the file; false (error() set)
  /// on a write error. Nothing more can be written afterwards.
  bool finish();

  /// errno of the first failure, 0 if none.
  int error() const { return error_; }
  /// Full chunks written to the file so far.
  std::uint64_t chunks_written() const { return chunks_written_; }
  /// The size the file has once finish()ed now: the chunks written, the current one up to its
  /// last event, and the end mark. 0 before open() and after finish().
  std::uint64_t file_size() const {
    return size_ == 0 ? 0 : chunks_written_ * size_ + pos_ + kEndOfFileSize;
  }
  const std::string& path() const { return path_; }

private:
  static constexpr std::uint8_t kEndOfChunk = 0, kEndOfFile = 2, kEndOfBuffer = 1, kChunkHeader = 3,
                                kTimestamp = 5, kLittleEndian = 0x42;
  static constexpr std::size_t kChunkHeaderSize = 18, kLastEventOffset = 10;
  static constexpr std::size_t kTimestampSize = 1 + sizeof(OTF2_TimeStamp);
  static constexpr std::size_t kEndOfFileSize = 2;
  /// The largest generated event: id, length byte and fields (< 255 bytes).
  static constexpr std::size_t kMaxEventSize = 2 + 255;
  /// [6][length][count][attribute][type][value]: one uint64 attribute at most.
  static constexpr std::size_t kMaxOneAttributeList = 2 + 1 + 5 + 1 + 9;
  static constexpr std::uint8_t kAttributeList = 6;

  /// Room for `bytes` after the event's timestamp record, which it writes when the time changed
  /// or a chunk begins; nullptr once writing has failed.
  std::uint8_t* reserve(OTF2_TimeStamp time, std::size_t bytes) {
    if (pos_ + kTimestampSize + bytes + kEndOfFileSize > size_ && !next_chunk()) return nullptr;
    std::uint8_t* p = chunk_.get() + pos_;
    if (!stamped_ || time != time_) {
      *p++ = kTimestamp;
      std::memcpy(p, &time, sizeof time);
      p += sizeof time;
      time_ = time;
      stamped_ = true;
    }
    return p;
  }
  std::size_t max_encoded_size() const {
    return size_ - kChunkHeaderSize - kTimestampSize - kEndOfFileSize;
  }
  void start_chunk();
  /// Writes the full chunk out and starts the next one.
  bool next_chunk();
  bool write_all(const std::uint8_t* p, std::size_t n);

  std::string path_;
  int fd_ = -1;
  void (*before_write_)() = nullptr;
  std::unique_ptr<std::uint8_t[]> chunk_;
  std::size_t size_ = 0; ///< 0 until open() succeeded, so begin_record() fails before
  std::size_t pos_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t chunks_written_ = 0;
  bool write_behind_ = false;
  OTF2_TimeStamp time_ = 0;
  bool stamped_ = false;           ///< the current chunk has a timestamp record
  std::uint8_t* length_ = nullptr; ///< length byte of the event being encoded
  int error_ = 0;
};

// Field encodings (OTF2's): 8-bit fields and timestamps raw, other integers compressed as a byte
// count and that many little-endian bytes, or one 0xff for a value with all bits set.
inline std::uint8_t* put_byte(std::uint8_t* p, std::uint8_t v) {
  *p = v;
  return p + 1;
}
inline std::uint8_t* put_raw64(std::uint8_t* p, std::uint64_t v) {
  std::memcpy(p, &v, sizeof v);
  return p + sizeof v;
}
inline std::uint8_t* put_compressed(std::uint8_t* p, std::uint64_t v, bool all_ones) {
  if (all_ones) return put_byte(p, 0xff);
  const int bytes = v == 0 ? 0 : (71 - __builtin_clzll(v)) / 8;
  *p++ = static_cast<std::uint8_t>(bytes);
  std::memcpy(p, &v, sizeof v); // little-endian; the chunk keeps room for a whole word
  return p + bytes;
}
inline std::uint8_t* put_compressed32(std::uint8_t* p, std::uint32_t v) {
  return put_compressed(p, v, v == UINT32_MAX);
}
inline std::uint8_t* put_compressed64(std::uint8_t* p, std::uint64_t v) {
  return put_compressed(p, v, v == UINT64_MAX);
}
inline std::uint8_t* put_compressed64(std::uint8_t* p, std::int64_t v) {
  return put_compressed64(p, static_cast<std::uint64_t>(v));
}

inline bool EventFileEncoder::attribute_uint64(OTF2_TimeStamp time, std::uint32_t attribute,
                                               std::uint64_t value) {
  std::uint8_t* p = reserve(time, kMaxOneAttributeList + kMaxEventSize);
  if (p == nullptr) return false;
  *p++ = kAttributeList;
  std::uint8_t* const length = p++;
  p = put_compressed32(p, 1); // entries
  p = put_compressed32(p, attribute);
  p = put_byte(p, OTF2_TYPE_UINT64);
  p = put_compressed64(p, value);
  *length = static_cast<std::uint8_t>(p - length - 1);
  pos_ = static_cast<std::size_t>(p - chunk_.get()); // not an event: events_ stays
  return true;
}

#include "event_encode.inc"

} // namespace htrace::format
