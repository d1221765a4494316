#include "format/event_merge.h"

#include "format/error.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

namespace htrace::format {

namespace {

// vm.max_map_count and how many mappings this process has; nullopt if they cannot be read.
std::optional<std::pair<size_t, size_t>> map_count() {
  std::ifstream limit("/proc/sys/vm/max_map_count");
  size_t max = 0;
  if (!(limit >> max)) return std::nullopt;
  std::ifstream maps("/proc/self/maps");
  size_t used = 0;
  for (std::string line; std::getline(maps, line);)
    ++used;
  return std::make_pair(max, used);
}

} // namespace

EventMerge::Cursor::Cursor(const std::string& path, size_t chunk_size, const IdMaps* id_maps)
    : file(std::in_place, path, MappedFile::kSmallFile),
      parser(file->data(), file->size(), chunk_size), maps(id_maps) {
  file->advise_sequential();
}

// Moves to the next event, giving back the pages read so far in steps of kReleaseStep.
bool EventMerge::Cursor::advance() {
  if (!parser.next(event)) return false;
  ++position;
  const size_t offset = static_cast<size_t>(event.begin - file->data());
  if (offset >= release_at) {
    file->release_before(offset);
    release_at = offset + kReleaseStep;
  }
  return true;
}

EventMerge::EventMerge(const std::string& dir, const std::vector<Input>& inputs, size_t chunk_size)
    : dir_(dir) {
  // Each file read in place takes a mapping: past vm.max_map_count mmap fails, and so would later
  // allocations. (Small files are copied and take none.)
  const auto count = map_count();
  size_t mapped = 0;
  ids_.reserve(inputs.size());
  heap_.reserve(inputs.size());
  for (const Input& in : inputs) {
    ids_.push_back(in.id);
    cursors_.emplace_back(event_file_path(dir, in.id), chunk_size, in.maps);
    if (!count || !cursors_.back().file->mapped()) continue;
    const auto [max, used] = *count;
    if (used + ++mapped + kSpareMappings > max)
      throw input_error("'" + dir + "': reading " + std::to_string(inputs.size()) +
                        " event files maps each one of " + std::to_string(MappedFile::kSmallFile) +
                        " bytes or more, and these need more memory mappings than "
                        "vm.max_map_count (" +
                        std::to_string(max) +
                        ") allows (raise it with 'sysctl -w vm.max_map_count=" +
                        std::to_string(used + inputs.size() + kSpareMappings) + "')");
  }
  for (uint32_t i = 0; i < cursors_.size(); ++i) {
    Cursor& c = cursors_[i];
    if (c.advance())
      heap_.push_back({c.event.time, i});
    else if (c.parser.error())
      fail(i, c.parser.error(), c.parser.error_offset());
    else
      c.file.reset();
  }
  for (size_t i = heap_.size() / 2; i-- > 0;)
    sift_down(i);
}

void EventMerge::sift_down(size_t i) {
  const size_t n = heap_.size();
  const Key key = heap_[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
    if (!(heap_[child] < key)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = key;
}

void EventMerge::fail(uint32_t input, const char* why, size_t offset) const {
  throw input_error("location " + std::to_string(ids_[input]) + ": '" +
                    event_file_path(dir_, ids_[input]) + "': corrupt event file at byte " +
                    std::to_string(offset) + " (" + why + ")");
}

uint64_t EventMerge::run(const EventDecodeCallbacks& callbacks,
                         OTF2_EvtReaderCallback_Metric metric, OtherEventFn other, void* user) {
  uint64_t events = 0;
  while (!heap_.empty()) {
    const uint32_t i = heap_[0].input;
    Cursor& c = cursors_[i];
    const DecodeError error = decode_event(c.event, c.file->data(), c.position, callbacks, other, i,
                                           user, c.maps, metric);
    if (error) fail(i, error.why, error.offset);
    ++events;
    if (c.advance()) {
      heap_[0].time = c.event.time;
    } else {
      if (c.parser.error()) fail(i, c.parser.error(), c.parser.error_offset());
      c.file.reset();
      heap_[0] = heap_.back();
      heap_.pop_back();
      if (heap_.empty()) break;
    }
    sift_down(0);
  }
  return events;
}

} // namespace htrace::format
