#include "event_file_scan.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace htrace::salvage {
namespace {

// OTF2's buffer format (the file format of OTF2 2 and 3): a chunked file is a sequence of
// chunks of the archive's chunk size, each starting with a header (type, endianness, number of
// its first event, number of its last event, both 8 bytes; events are numbered from 1 per
// location). Records follow: a timestamp (type, 8 bytes), or a record with its length (type, one
// length byte, or 0xff and 8 length bytes, then the data). A zero type ends a chunk's records.
constexpr std::uint8_t kEndOfChunk = 0;
constexpr std::uint8_t kEndOfBuffer = 1;
constexpr std::uint8_t kEndOfFile = 2;
constexpr std::uint8_t kChunkHeader = 3;
constexpr std::uint8_t kTimestamp = 5;
constexpr std::uint8_t kAttributeList = 6; ///< precedes the event it belongs to; not an event
constexpr std::uint8_t kBigEndian = 0x23;
constexpr std::uint8_t kLittleEndian = 0x42;
constexpr std::size_t kHeaderSize = 18;

std::uint64_t load_u64(const unsigned char* p, bool swap) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return swap ? __builtin_bswap64(v) : v;
}

bool host_is_little_endian() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

/// The records of one chunk's bytes [kHeaderSize, size).
struct ChunkWalk {
  std::uint64_t events = 0;
  bool end_marker = false;  ///< reached a record that ends the chunk's records
  bool end_of_file = false; ///< ... and the file's
  bool cut = false;         ///< the bytes end inside a record
};

ChunkWalk walk_records(const unsigned char* chunk, std::size_t size, bool swap) {
  ChunkWalk w;
  std::size_t pos = kHeaderSize;
  while (pos < size) {
    const std::uint8_t type = chunk[pos];
    if (type == kEndOfChunk || type == kEndOfBuffer || type == kEndOfFile) {
      w.end_marker = true;
      w.end_of_file = type != kEndOfChunk;
      return w;
    }
    if (type == kTimestamp) {
      if (size - pos < 9) break;
      pos += 9;
      continue;
    }
    if (size - pos < 2) break;
    std::uint64_t length = chunk[pos + 1];
    std::size_t data = pos + 2;
    if (length == 0xff) {
      if (size - pos < 10) break;
      length = load_u64(chunk + pos + 2, swap);
      data = pos + 10;
    }
    if (length > size - data) break;
    pos = data + static_cast<std::size_t>(length);
    if (type != kAttributeList) ++w.events;
  }
  w.cut = pos < size;
  return w;
}

} // namespace

EventFileExtent scan_event_file(const std::string& path, std::uint64_t chunk_size) {
  EventFileExtent out;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) {
    out.damage = std::string("cannot open it: ") + std::strerror(errno);
    return out;
  }
  const bool host_little = host_is_little_endian();
  std::vector<unsigned char> chunk(static_cast<std::size_t>(chunk_size));
  std::uint64_t next_event = 1;
  for (std::uint64_t number = 1;; ++number) {
    const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    if (got == 0) {
      if (std::ferror(file.get())) out.damage = "read error in chunk " + std::to_string(number);
      return out;
    }
    const std::string where = "chunk " + std::to_string(number);
    const bool whole = got == chunk.size();
    if (got < kHeaderSize) {
      out.damage = "the file ends inside the header of " + where;
      return out;
    }
    if (chunk[0] != kChunkHeader || (chunk[1] != kBigEndian && chunk[1] != kLittleEndian)) {
      out.damage = where + " has no chunk header";
      return out;
    }
    const bool swap = (chunk[1] == kLittleEndian) != host_little;
    const std::uint64_t first = load_u64(chunk.data() + 2, swap);
    const std::uint64_t last = load_u64(chunk.data() + 10, swap);
    if (first != next_event || last + 1 < first) {
      out.damage = where + " numbers its events " + std::to_string(first) + " to " +
                   std::to_string(last) + ", after event " + std::to_string(next_event - 1);
      return out;
    }
    const std::uint64_t counted = last + 1 - first; // what the header says the chunk holds
    const ChunkWalk w = walk_records(chunk.data(), got, swap);
    if (w.events > counted || (whole && w.events != counted)) {
      out.damage = where + " holds " + std::to_string(w.events) + " whole records, its header " +
                   "counts " + std::to_string(counted);
      return out;
    }
    out.events += w.events;
    next_event += w.events;
    if (w.events < counted) {
      // Written in part: the process died or the disk filled while OTF2 wrote it.
      out.missing = counted - w.events;
      out.damage = "the file ends inside " + where + " (" + std::to_string(out.missing) +
                   " of its " + std::to_string(counted) + " events missing" +
                   (w.cut ? ", the last one cut" : "") + ")";
      return out;
    }
    if (w.end_of_file || !whole) return out;
  }
}

} // namespace htrace::salvage
