// Direct reading of OTF2 event files (POSIX substrate): every event's bytes and time, without the
// OTF2 library. htrace-correct copies records through it when only timestamps change
// (correct/event_file_rewrite.h); htrace-salvage finds where a damaged file stops being readable.
//
// The layout, as the OTF2 library writes and reads it (format version 2, unchanged since OTF2 1.0):
//  - The file is a sequence of chunks of the archive's event chunk size; the last one is cut short.
//    A chunk starts with [3][endianness][first event number: 8 bytes][last event number: 8 bytes]
//    (numbers count events from 1) and is padded with END_OF_CHUNK bytes (0).
//  - [5][8-byte time] sets the time of the events that follow; each chunk begins with one.
//  - [6][length][...] is an attribute list; it belongs to the event after it.
//  - An event is [type id][length][...], or, for the "singleton" types whose only field is a
//    compressed integer, [type id][compressed integer] (event_layout.inc). A length is one byte,
//    or 0xff and 8 bytes; a compressed integer is a byte count (0xff: all ones) and those bytes.
//  - Every record ends at least one byte before the end of its chunk.
//  - The last event is followed by [2 END_OF_FILE][1].
#ifndef HTRACE_FORMAT_EVENT_FILE_H
#define HTRACE_FORMAT_EVENT_FILE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace htrace::format {

// A whole file mapped read-only, or, if smaller than `copy_below` bytes, read into memory: for a
// small file that is cheaper (unmapping it flushes the TLB, the process's largest cost when
// thousands of small event files are read). Throws std::runtime_error naming the path.
class MappedFile {
public:
  static constexpr size_t kSmallFile = 64 * 1024; // a `copy_below` for readers of many files
  explicit MappedFile(const std::string& path, size_t copy_below = 0);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
        released_(o.released_), copy_(std::move(o.copy_)) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool mapped() const { return data_ && !copied(); }
  // For readers that keep many files mapped at once: hints that the file is read front to back,
  // and gives back the resident pages wholly before byte `offset` (read again from the page
  // cache if touched again). Both are hints: errors are ignored.
  void advise_sequential();
  void release_before(size_t offset);

private:
  bool copied() const { return copy_ != nullptr; }
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;             // bytes from the start already given back (whole pages)
  std::unique_ptr<uint8_t[]> copy_; // a small file's bytes (then data_ points here)
};

// One event of an event file: its bytes (with the attribute list before it, if any) and time.
struct RawEvent {
  const uint8_t* begin;
  const uint8_t* end;
  const uint8_t* fields; // the event record's fields (after its id and length), up to `end`
  uint64_t time;
  int type; // record_tables.h numbering; >= event_record_type_count() for types OTF2 does not know
};

// Walks the events of an event file in order. Refuses anything it does not know (other buffer
// records, another endianness, a record crossing its chunk, a missing END_OF_FILE).
//
// The file may also come through a window of its bytes: the parser then stops, starved(), where
// the next record is not wholly in the window, and goes on once slide() has shown it the window
// moved on (from resume_offset() or earlier).
class EventFileParser {
public:
  // The whole file of `size` bytes at `data`.
  EventFileParser(const uint8_t* data, size_t size, size_t chunk_size)
      : EventFileParser(data, size, chunk_size, size) {}
  // The first `loaded` bytes of a file of `size` bytes at `data`.
  EventFileParser(const uint8_t* data, size_t size, size_t chunk_size, size_t loaded);
  // Calls f(event) for every event in order; f returns false to stop. Returns true if the file
  // was read to its end, false if f stopped, the window ends (starved()) or the data is malformed
  // (then error() != nullptr).
  template <class F> bool for_each(F&& f) {
    RawEvent e;
    return for_each_into(e, std::forward<F>(f));
  }
  // The next event (one event at a time, for readers that interleave files), written into
  // `event` in place; false at the end of the file, at the end of the window (starved(); `event`
  // is left as it was) or on malformed data (then error() != nullptr).
  bool next(RawEvent& event) {
    bool got = false;
    for_each_into(event, [&](const RawEvent&) {
      got = true;
      return false;
    });
    return got;
  }
  const char* error() const { return error_; }
  // Where the malformed data begins (a byte offset in the file), when error() != nullptr.
  size_t error_offset() const { return error_offset_; }

  // The next record lies (partly) past the window: next() and for_each() return false until
  // slide() has loaded it.
  bool starved() const { return starved_; }
  // The file offset reading goes on from: the next event's first record (its attribute list, if
  // any), or the chunk to open.
  size_t resume_offset() const { return resume_offset_; }
  // The file offset of the window's first byte.
  size_t window_offset() const { return base_; }
  // Once starved(): the window moved, `data` now holds the `loaded` bytes of the file from
  // `offset` (at most resume_offset()) on.
  void slide(const uint8_t* data, size_t offset, size_t loaded);

  static constexpr uint8_t kTimestamp = 5, kAttributeList = 6, kFirstEventId = 10;
  static constexpr size_t kTimestampSize = 9;

private:
  // for_each with each event written into `e` field by field. (A copy of a whole event right
  // after it was written, as wider loads than the stores, cannot be forwarded from the store
  // buffer and waits for every earlier store to reach the cache.)
  template <class F> bool for_each_into(RawEvent& e, F&& f) {
    for (;;) {
      // Inline, with the position in registers: events without an attribute list, maybe after a
      // timestamp, well inside their chunk. Everything else takes next_slow().
      const uint8_t* p = p_;
      const uint8_t* const end = chunk_end_;
      uint64_t time = time_;
      while (p && end - p > 32) {
        if (*p == kTimestamp) {
          std::memcpy(&time, p + 1, 8);
          p += kTimestampSize;
        }
        const uint8_t id = p[0], next = p[1];
        const RecordKind kind = kinds_[id];
        // A singleton's compressed integer: 0xff (all ones) or up to 8 bytes; a length: < 0xff.
        const bool plain =
            kind == RecordKind::Sized ? next != 0xff : kind == RecordKind::Singleton && next <= 8;
        const size_t size = 2 + (next == 0xff ? 0 : next);
        if (!plain || size >= size_t(end - p)) break;
        // A singleton's field is its compressed integer, right after the id.
        e = {p, p + size, p + (kind == RecordKind::Singleton ? 1 : 2), time, id - kFirstEventId};
        p += size;
        if (!f(static_cast<const RawEvent&>(e))) {
          p_ = p, time_ = time;
          return false;
        }
      }
      p_ = p, time_ = time;
      if (!next_slow(e)) return error_ == nullptr && !starved_;
      if (!f(static_cast<const RawEvent&>(e))) return false;
    }
  }

  enum class RecordKind : uint8_t { Buffer, Singleton, Sized };
  // The next event at any position; false at the end of the file or on malformed data.
  bool next_slow(RawEvent& event);
  bool open_chunk(size_t offset);
  // Points chunk_end_ at the end of the chunk or of the window, whichever comes first.
  void limit_chunk();
  // The record at `record` (or the event it starts) does not end inside chunk_end_: starved if
  // the window ends first, else malformed. Returns false.
  bool crosses(const uint8_t* record);
  bool starve(size_t offset, bool opens_chunk);
  size_t offset_of(const uint8_t* p) const { return base_ + size_t(p - data_); }
  bool fail(const char* why, size_t offset) {
    error_ = why;
    error_offset_ = offset;
    return false;
  }
  bool fail(const char* why) { return fail(why, p_ ? offset_of(p_) : chunk_offset_); }
  // Reads a record length at p (one byte, or 0xff and 8 bytes); false if it leaves the chunk.
  bool length(const uint8_t* p, size_t* header, size_t* payload) const;

  // What reading an event inside a chunk touches comes first, in 32 bytes: a reader of many
  // files (event_merge.h) fetches them with its own state.
  const uint8_t* p_ = nullptr;
  const uint8_t* chunk_end_ = nullptr;
  uint64_t time_ = 0;
  const RecordKind* kinds_; // by record id
  const uint8_t* data_;     // the window: bytes from file offset base_, loaded_ of them
  size_t size_, chunk_size_;
  size_t base_ = 0, loaded_;
  size_t chunk_offset_ = 0;
  const char* error_ = nullptr;
  size_t error_offset_ = 0;
  size_t resume_offset_ = 0;
  bool starved_ = false, resume_opens_chunk_ = false;
};

// The event file of location `id` in `dir`, a directory of event files (ArchiveReader::event_dir,
// or the output's).
std::string event_file_path(const std::string& dir, uint64_t id);

// Whether location `id`'s event file is missing from `dir` (empty: no directory of event files)
// only because it would hold nothing: its definitions declare no events, and a writer may then
// leave the file out. OTF2's reader fails on such an archive; htrace's tools read the location as
// one without events.
bool empty_event_file_left_out(const std::string& dir, uint64_t id, uint64_t declared_events);

} // namespace htrace::format
#endif
