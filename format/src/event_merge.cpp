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
  cursors_ = std::make_unique<std::optional<Cursor>[]>(inputs.size());
  for (const Input& in : inputs) {
    ids_.push_back(in.id);
    const Cursor& c = cursors_[inputs_++].emplace(event_file_path(dir, in.id), chunk_size, in.maps);
    if (!count || !c.file->mapped()) continue;
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
  next_event_.resize(inputs_);
  for (uint32_t i = 0; i < inputs_; ++i) {
    Cursor& c = *cursors_[i];
    if (c.advance()) {
      heap_.push_back(key(c.event.time, i));
      next_event_[i] = c.event.begin;
    } else if (c.parser.error())
      fail(i, c.parser.error(), c.parser.error_offset());
    else
      c.file.reset();
  }
  if (!heap_.empty())
    for (size_t i = (heap_.size() - 1) / kArity + 1; i-- > 0;)
      sift_down(i);
}

void EventMerge::sift_down(size_t i) {
  const size_t n = heap_.size();
  const Key k = heap_[i];
  for (size_t child = smallest_child(i); child < n && heap_[child] < k; child = smallest_child(i)) {
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = k;
}

// The top's input has its next event at `k`. With events spread over many inputs, that one comes
// after most others and sinks to a leaf: so the hole at the top moves down along the smallest
// children to a leaf without comparing them with `k`, and `k` rises from there, rarely more than
// a level.
void EventMerge::replace_top(Key k) {
  const size_t n = heap_.size();
  size_t i = 0;
  for (size_t child = smallest_child(0); child < n; child = smallest_child(i)) {
    heap_[i] = heap_[child];
    i = child;
  }
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!(k < heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = k;
}

// Asks for the cursor of `input` and its next event to be brought into the cache: events come
// from ever another input, and delivering one takes long enough to hide the wait for the next.
void EventMerge::prefetch(uint32_t input) const {
  const char* p = reinterpret_cast<const char*>(&cursors_[input]);
  for (size_t offset = 0; offset < sizeof(std::optional<Cursor>); offset += 64)
    __builtin_prefetch(p + offset);
  __builtin_prefetch(next_event_[input]);
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
    const uint32_t i = input_of(heap_[0]);
    Cursor& c = *cursors_[i];
    // The next event is most likely the smallest child's, unless this input's own next comes
    // first.
    if (const size_t next = smallest_child(0); next < heap_.size()) prefetch(input_of(heap_[next]));
    const DecodeError error = decode_event(c.event, c.file->data(), c.position, callbacks, other, i,
                                           user, c.maps, metric);
    if (error) fail(i, error.why, error.offset);
    ++events;
    if (c.advance()) {
      next_event_[i] = c.event.begin;
      replace_top(key(c.event.time, i));
    } else {
      if (c.parser.error()) fail(i, c.parser.error(), c.parser.error_offset());
      c.file.reset();
      heap_[0] = heap_.back();
      heap_.pop_back();
      if (heap_.empty()) break;
      sift_down(0);
    }
  }
  return events;
}

} // namespace htrace::format
