#include "correct/event_file_rewrite.h"

#include "format/error.h"
#include "format/event_file.h"
#include "format/record_tables.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace htrace::correct {
namespace {

std::string io_error(const std::string& what, const std::string& path) {
  return "'" + path + "': " + what + ": " + std::strerror(errno);
}

} // namespace

EventFileWriter::EventFileWriter(const std::string& path, size_t chunk_size, int created) {
  if (!file_.open(path, chunk_size, nullptr, created)) {
    if (file_.error() == EINVAL) throw input_error("'" + path + "': invalid chunk size");
    errno = file_.error();
    throw output_error(io_error("cannot create", path));
  }
  // The output is made durable before it is renamed into place (TempOutput::commit): its disk
  // writes start while the rest is computed instead of all in that fsync.
  file_.write_behind();
}

void EventFileWriter::fail() const {
  if (file_.error() == E2BIG)
    throw input_error("'" + file_.path() + "': an event is larger than the chunk size");
  errno = file_.error();
  throw output_error(io_error("cannot write", file_.path()));
}

void EventFileWriter::finish() {
  if (!file_.finish()) fail();
}

std::optional<int64_t> rewrite_event_file(const format::MappedFile& in, const std::string& out,
                                          size_t chunk_size, TimeSource& times,
                                          const TypeCounts& expected, int out_created) {
  {
    format::EventFileParser parser(in.data(), in.size(), chunk_size);
    EventFileWriter writer(out, chunk_size, out_created);
    std::array<int64_t, TimeSource::kChunk> corrected, input;
    const int known_types = format::event_record_type_count();
    std::vector<uint64_t> counts(static_cast<size_t>(known_types));
    size_t k = 0, n = 0;
    int64_t last = 0;
    const bool read = parser.for_each([&](const format::RawEvent& e) {
      if (k == n) {
        n = times.next(corrected.data(), input.data(), corrected.size()), k = 0;
        if (n == 0) return false;
      }
      if (static_cast<int64_t>(e.time) != input[k] || e.type >= known_types) return false;
      ++counts[static_cast<size_t>(e.type)];
      last = corrected[k++];
      writer.add(last, e.begin, static_cast<size_t>(e.end - e.begin));
      return true;
    });
    std::vector<uint64_t> want(static_cast<size_t>(known_types));
    bool matches = read && k == n && times.next(corrected.data(), input.data(), 1) == 0;
    for (const auto& [type, count] : expected)
      if (type < known_types)
        want[static_cast<size_t>(type)] = count;
      else
        matches = false;
    if (matches && counts == want) {
      writer.finish();
      return last;
    }
  }
  ::unlink(out.c_str());
  return std::nullopt;
}

} // namespace htrace::correct
