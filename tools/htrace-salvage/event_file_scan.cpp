#include "event_file_scan.h"

#include "format/event_file.h"

#include <cstring>
#include <exception>

namespace htrace::salvage {
namespace {

// Event numbers in a chunk header (format/event_file.h): first at byte 2, last at byte 10.
std::uint64_t header_field(const std::uint8_t* chunk, std::size_t offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, chunk + offset, sizeof v);
  return v;
}

} // namespace

EventFileExtent scan_event_file(const std::string& path, std::uint64_t chunk_size) {
  EventFileExtent out;
  try {
    format::MappedFile file(path);
    if (file.size() == 0) return out;
    format::EventFileParser parser(file.data(), file.size(), chunk_size);
    const std::size_t last_chunk = (file.size() - 1) / chunk_size * chunk_size;
    std::uint64_t in_last_chunk = 0;
    // The pages read are given back as the scan goes: one chunk resident, not the whole file.
    file.advise_sequential();
    std::size_t release_at = chunk_size;
    const bool complete = parser.for_each([&](const format::RawEvent& e) {
      ++out.events;
      const auto offset = static_cast<std::size_t>(e.begin - file.data());
      if (offset >= last_chunk) ++in_last_chunk;
      if (offset >= release_at) {
        file.release_before(offset);
        release_at = offset + chunk_size;
      }
      return true;
    });
    if (complete) return out;
    const std::string after = " after " + std::to_string(out.events) + " whole events";
    const std::size_t cut = file.size() - last_chunk; // bytes of the last chunk on disk
    if (cut < chunk_size && cut >= 18) {
      // A chunk written in part: its header says how many events it was to hold.
      const std::uint8_t* header = file.data() + last_chunk;
      const std::uint64_t first = header_field(header, 2), last = header_field(header, 10);
      if (last + 1 >= first && last + 1 - first >= in_last_chunk)
        out.missing = last + 1 - first - in_last_chunk;
      out.damage = "the file ends inside chunk " + std::to_string(last_chunk / chunk_size + 1) +
                   ", " + std::to_string(out.missing) + " of its events missing";
    } else if (cut == chunk_size && parser.error() &&
               std::strcmp(parser.error(), "file ends without END_OF_FILE") == 0) {
      out.damage = "the file was not finished: it ends after its whole chunk " +
                   std::to_string(last_chunk / chunk_size + 1);
    } else {
      out.damage = std::string(parser.error() ? parser.error() : "unreadable") + after;
    }
  } catch (const std::exception& e) {
    out.damage = e.what();
  }
  return out;
}

} // namespace htrace::salvage
