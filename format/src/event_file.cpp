#include "format/event_file.h"

#include "format/error.h"
#include "format/file_descriptor.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace htrace::format {
namespace {

#include "event_layout.inc"

// Buffer records of the OTF2 format (see event_file.h). Event type ids start at kFirstEventId and
// follow the order of the OTF2 reader's callbacks (checked by the correct_record_store test, and
// for every file copied after a read through OTF2's reader by rewrite_event_file's per-type
// counts).
constexpr uint8_t kEndOfChunk = 0, kEndOfFile = 2, kChunkHeader = 3;
constexpr uint8_t kAttributeList = EventFileParser::kAttributeList;
constexpr size_t kTimestampSize = EventFileParser::kTimestampSize;
constexpr size_t kChunkHeaderSize = 18;
// OTF2's mark for little-endian data; files in another byte order are left to the library.
constexpr uint8_t kLittleEndian = 0x42;

constexpr int kKnownTypes = static_cast<int>(std::size(kSingletonEvent));

std::string io_error(const std::string& what, const std::string& path) {
  return "'" + path + "': " + what + ": " + std::strerror(errno);
}

} // namespace

MappedFile::MappedFile(const std::string& path, size_t copy_below) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw input_error(io_error("cannot open", path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw input_error(io_error("cannot stat", path));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0 && size_ < copy_below) {
    copy_.reset(new uint8_t[size_]);
    if (!read_exactly(fd, copy_.get(), size_, 0)) {
      const std::string why = io_error("cannot read", path);
      ::close(fd);
      throw input_error(why);
    }
    data_ = copy_.get();
  } else if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw input_error(io_error("cannot map", path));
    }
    data_ = static_cast<uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ && !copy_) ::munmap(data_, size_);
}

void MappedFile::advise_sequential() {
  if (mapped()) ::madvise(data_, size_, MADV_SEQUENTIAL);
}

void MappedFile::release_before(size_t offset) {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t end = std::min(offset, size_) / page * page;
  if (!mapped() || end <= released_) return;
  ::madvise(data_ + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

EventFileParser::EventFileParser(const uint8_t* data, size_t size, size_t chunk_size, size_t loaded)
    : data_(data), size_(size), chunk_size_(chunk_size), loaded_(std::min(loaded, size)) {
  // Record kinds by id: events of types OTF2 does not know (yet) carry their length, like all
  // non-singleton events.
  static const std::array<RecordKind, 256> kinds = [] {
    std::array<RecordKind, 256> k{};
    for (int id = kFirstEventId; id < 256; ++id) {
      const int type = id - kFirstEventId;
      k[static_cast<size_t>(id)] =
          type < kKnownTypes && kSingletonEvent[type] ? RecordKind::Singleton : RecordKind::Sized;
    }
    return k;
  }();
  kinds_ = kinds.data();
  // (Until a chunk is open, p_ is null: nothing to read.)
  if (chunk_size_ <= kChunkHeaderSize)
    fail("invalid chunk size", 0);
  else
    open_chunk(0);
}

bool EventFileParser::open_chunk(size_t offset) {
  if (offset >= size_) return fail("file ends without END_OF_FILE", size_);
  const size_t n = std::min(chunk_size_, size_ - offset);
  if (n <= kChunkHeaderSize) return fail("chunk without a chunk header", offset);
  if (offset + kChunkHeaderSize > base_ + loaded_) return starve(offset, true);
  const uint8_t* c = data_ + (offset - base_);
  if (c[0] != kChunkHeader) return fail("chunk without a chunk header", offset);
  if (c[1] != kLittleEndian) return fail("not little-endian", offset);
  chunk_offset_ = offset;
  p_ = c + kChunkHeaderSize;
  limit_chunk();
  return true;
}

void EventFileParser::limit_chunk() {
  const size_t end = std::min({chunk_offset_ + chunk_size_, size_, base_ + loaded_});
  chunk_end_ = data_ + (end - base_);
}

bool EventFileParser::crosses(const uint8_t* record) {
  if (offset_of(chunk_end_) < std::min(chunk_offset_ + chunk_size_, size_))
    return starve(offset_of(record), false);
  return fail("record crosses the end of its chunk");
}

bool EventFileParser::starve(size_t offset, bool opens_chunk) {
  starved_ = true;
  resume_offset_ = offset;
  resume_opens_chunk_ = opens_chunk;
  return false;
}

void EventFileParser::slide(const uint8_t* data, size_t offset, size_t loaded) {
  data_ = data;
  base_ = offset;
  loaded_ = std::min(loaded, size_ - offset);
  starved_ = false;
  if (!resume_opens_chunk_) {
    p_ = data_ + (resume_offset_ - base_);
    limit_chunk();
  } else if (!open_chunk(resume_offset_)) {
    // Starved again, or malformed: no position in the window the bytes have left.
    p_ = chunk_end_ = nullptr;
  }
}

bool EventFileParser::length(const uint8_t* p, size_t* header, size_t* payload) const {
  if (p >= chunk_end_) return false;
  if (*p != 0xff) {
    *header = 1, *payload = *p;
  } else {
    if (chunk_end_ - p < 9) return false;
    uint64_t n;
    std::memcpy(&n, p + 1, 8);
    if (n >= size_t(chunk_end_ - p)) return false;
    *header = 9, *payload = static_cast<size_t>(n);
  }
  return true;
}

bool EventFileParser::next_slow(RawEvent& event) {
  if (error_ || !p_ || starved_) return false;
  const uint8_t* attributes = nullptr;
  for (;;) {
    // Where the window cuts the event, reading goes on from its first record.
    const uint8_t* const first = attributes ? attributes : p_;
    if (p_ >= chunk_end_) return crosses(first);
    const uint8_t id = *p_;
    size_t header = 0, payload = 0;
    if (id >= kFirstEventId) {
      const int type = id - kFirstEventId;
      if (kinds_[id] == RecordKind::Singleton) {
        if (chunk_end_ - p_ < 2) return crosses(first);
        const uint8_t bytes = p_[1];
        header = 1, payload = bytes == 0xff ? 0 : bytes;
        if (payload > 8) return fail("invalid compressed integer");
      } else if (!length(p_ + 1, &header, &payload)) {
        return crosses(first);
      }
      const size_t size = 1 + header + payload;
      // As for OTF2's reader, a record ends before the last byte of its chunk.
      if (size >= size_t(chunk_end_ - p_)) return crosses(first);
      event.begin = attributes ? attributes : p_;
      event.fields = p_ + (kinds_[id] == RecordKind::Singleton ? 1 : 1 + header);
      p_ += size;
      event.end = p_;
      event.time = time_;
      event.type = type;
      return true;
    }
    switch (id) {
    case kTimestamp:
      if (size_t(chunk_end_ - p_) <= kTimestampSize) return crosses(first);
      std::memcpy(&time_, p_ + 1, 8);
      p_ += kTimestampSize;
      break;
    case kAttributeList:
      if (attributes) return fail("two attribute lists for one event");
      if (!length(p_ + 1, &header, &payload) || 1 + header + payload >= size_t(chunk_end_ - p_))
        return crosses(first);
      attributes = p_;
      p_ += 1 + header + payload;
      break;
    case kEndOfChunk:
      if (attributes) return fail("attribute list without its event");
      if (!open_chunk(chunk_offset_ + chunk_size_)) return false;
      break;
    case kEndOfFile:
      if (attributes) return fail("attribute list without its event");
      p_ = nullptr;
      return false;
    default:
      return fail("unknown buffer record");
    }
  }
}

std::string event_file_path(const std::string& dir, uint64_t id) {
  return dir + "/" + std::to_string(id) + ".evt";
}

bool empty_event_file_left_out(const std::string& dir, uint64_t id, uint64_t declared_events) {
  return declared_events == 0 && !dir.empty() &&
         ::access(event_file_path(dir, id).c_str(), F_OK) != 0 && errno == ENOENT;
}

} // namespace htrace::format
