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

EventMerge::Cursor::Cursor(const std::string& path, size_t chunk_size, const IdMaps* id_maps,
                           CopyArena* arena)
    : Cursor(MappedFile(path, MappedFile::kSmallFile, arena), chunk_size, id_maps) {}

// (A moved MappedFile keeps its bytes where they are.)
EventMerge::Cursor::Cursor(MappedFile mapped, size_t chunk_size, const IdMaps* id_maps)
    : data(mapped.data()), maps(id_maps), release_at(mapped.mapped() ? 0 : SIZE_MAX),
      parser(mapped.data(), mapped.size(), chunk_size), file(std::move(mapped)) {
  file->advise_sequential();
}

// Moves to the next event, giving back the pages before the one it leaves (which is still to be
// delivered) in steps of kReleaseStep.
bool EventMerge::Cursor::advance() {
  const uint8_t* const left = event.begin;
  if (!parser.next(event)) return false;
  ++position;
  if (left) {
    const size_t offset = static_cast<size_t>(left - data);
    if (offset >= release_at) {
      file->release_before(offset);
      release_at = offset + kReleaseStep;
    }
  }
  return true;
}

EventMerge::EventMerge(const std::string& dir, const std::vector<Input>& inputs, size_t chunk_size)
    : dir_(dir) {
  // Each file read in place takes a mapping: past vm.max_map_count mmap fails, and so would later
  // allocations. (Small files are copied into the arena: a mapping per 2 MiB of them at most.)
  static_assert(MappedFile::kSmallFile <= CopyArena::kSlab, "a small file fits in a slab");
  const auto count = map_count();
  size_t mapped = 0;
  ids_.reserve(inputs.size());
  cursors_ = std::make_unique<std::optional<Cursor>[]>(inputs.size());
  for (const Input& in : inputs) {
    ids_.push_back(in.id);
    const Cursor& c =
        cursors_[inputs_++].emplace(event_file_path(dir, in.id), chunk_size, in.maps, &arena_);
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
  next_bytes_.resize(inputs_);
  std::vector<Key> leaves(inputs_, kDone);
  for (uint32_t i = 0; i < inputs_; ++i) {
    Cursor& c = *cursors_[i];
    if (c.advance()) {
      leaves[i] = key(c.event.time, i);
      next_bytes_[i] = {c.event.begin, c.event.end};
    } else if (c.parser.error())
      fail(i, c.parser.error(), c.parser.error_offset());
    else
      c.file.reset();
  }
  build(leaves);
}

// Plays every match bottom-up: `winners` holds the winner at each node, leaves included.
void EventMerge::build(const std::vector<Key>& leaves) {
  const size_t n = leaves.size();
  tree_.assign(n, kDone);
  if (n == 0) return;
  std::vector<Key> winners(2 * n);
  std::copy(leaves.begin(), leaves.end(), winners.begin() + static_cast<std::ptrdiff_t>(n));
  for (size_t node = n - 1; node > 0; --node) {
    const Key left = winners[2 * node], right = winners[2 * node + 1];
    winners[node] = std::min(left, right);
    tree_[node] = std::max(left, right);
  }
  tree_[0] = n == 1 ? leaves[0] : winners[1];
}

// Asks for the cursor of `input` and its next event to be brought into the cache: events come
// from ever another input, and delivering one takes long enough to hide the wait for the next.
void EventMerge::prefetch(uint32_t input, size_t byte_lines) const {
  const char* p = reinterpret_cast<const char*>(&*cursors_[input]);
  for (size_t line = 0; line < kCursorLines; ++line)
    __builtin_prefetch(p + 64 * line);
  const NextBytes& next = next_bytes_[input];
  // (Addresses as numbers, here and below: they may lie past the file's end.)
  for (size_t line = 0; line < byte_lines; ++line)
    __builtin_prefetch(
        reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(next.event) + 64 * line));
  // The next record's id and length, after a timestamp if one comes first (as a number: that may
  // lie past the file's end, where a prefetch is harmless but a pointer may not point).
  const uintptr_t header =
      reinterpret_cast<uintptr_t>(next.after) + EventFileParser::kTimestampSize + 1;
  __builtin_prefetch(reinterpret_cast<const void*>(header));
}

void EventMerge::fail(uint32_t input, const char* why, size_t offset) const {
  throw input_error("location " + std::to_string(ids_[input]) + ": '" +
                    event_file_path(dir_, ids_[input]) + "': corrupt event file at byte " +
                    std::to_string(offset) + " (" + why + ")");
}

void EventMerge::decode(uint32_t i, const RawEvent& event, uint64_t position,
                        const EventDecodeCallbacks& callbacks, OTF2_EvtReaderCallback_Metric metric,
                        OtherEventFn other, void* user) {
  const Cursor& c = *cursors_[i];
  const DecodeError error =
      decode_event(event, c.data, position, callbacks, other, i, user, c.maps, metric);
  if (error) fail(i, error.why, error.offset);
}

void EventMerge::finish_input(uint32_t i) {
  Cursor& c = *cursors_[i];
  if (c.parser.error()) fail(i, c.parser.error(), c.parser.error_offset());
  c.file.reset();
}

uint64_t EventMerge::run(const EventDecodeCallbacks& callbacks,
                         OTF2_EvtReaderCallback_Metric metric, OtherEventFn other, void* user,
                         NextInputFn next) {
  uint64_t events = 0;
  if (next && !tree_.empty() && tree_[0] != kDone) next(input_of(tree_[0]), user);
  while (!tree_.empty() && tree_[0] != kDone) {
    const uint32_t i = input_of(tree_[0]);
    Cursor& c = *cursors_[i];
    const RawEvent event = c.event;
    const uint64_t position = c.position;
    // The input's next event is read first: then the next winner is known, and its cursor and
    // event come into the cache while this event is delivered.
    const bool more = c.advance();
    if (more) next_bytes_[i] = {c.event.begin, c.event.end};
    replay(i, more ? key(c.event.time, i) : kDone);
    if (tree_[0] != kDone) {
      prefetch(input_of(tree_[0]));
      if (next) next(input_of(tree_[0]), user);
    }
    decode(i, event, position, callbacks, metric, other, user);
    if (!more) finish_input(i);
    ++events;
  }
  return events;
}

uint64_t EventMerge::run_in_windows(const EventDecodeCallbacks& callbacks,
                                    OTF2_EvtReaderCallback_Metric metric, OtherEventFn other,
                                    void* user, WindowEndFn window_end, uint64_t first_window,
                                    uint64_t events_per_window, NextInputFn next) {
  std::vector<uint32_t> live; // the inputs not read to their end, in input order
  uint64_t next_time = UINT64_MAX;
  for (uint32_t i = 0; i < inputs_; ++i)
    if (cursors_[i]->file) {
      live.push_back(i);
      next_time = std::min(next_time, cursors_[i]->event.time);
    }
  uint64_t events = 0, width = std::max<uint64_t>(first_window, 1);
  const uint64_t target = std::max<uint64_t>(events_per_window, 1);
  while (!live.empty()) {
    // The window starts at the earliest event left (a gap in time costs no empty windows).
    const uint64_t end = next_time > UINT64_MAX - width ? UINT64_MAX : next_time + width;
    uint64_t delivered = 0;
    next_time = UINT64_MAX;
    size_t kept = 0;
    for (size_t k = 0; k < live.size(); ++k) {
      const uint32_t i = live[k];
      // The next input's cursor, bytes and consumer state come into the cache during this run.
      if (k + 1 < live.size()) {
        prefetch(live[k + 1], kRunLines);
        if (next) next(live[k + 1], user);
      }
      Cursor& c = *cursors_[i];
      bool more = true;
      while (c.event.time < end || end == UINT64_MAX) {
        // Delivered where it lies, then the next one read over it: a copy of the event that
        // advance() has just written may wait for the stores of the delivery before it
        // (EventFileParser::for_each_into).
        decode(i, c.event, c.position, callbacks, metric, other, user);
        ++delivered;
        more = c.advance();
        if (!more) {
          finish_input(i);
          break;
        }
      }
      if (!more) continue;
      next_bytes_[i] = {c.event.begin, c.event.end}; // for the next window's prefetch
      live[kept++] = i;
      next_time = std::min(next_time, c.event.time);
    }
    live.resize(kept);
    events += delivered;
    if (window_end) window_end(end, user);
    // The next window from this one's density, changing by a factor of 4 at most.
    const double scale =
        static_cast<double>(target) / static_cast<double>(std::max<uint64_t>(delivered, 1));
    const double wider = static_cast<double>(width) * std::clamp(scale, 0.25, 4.0);
    width = wider >= 1e18 ? uint64_t{1000000000000000000}
                          : std::max<uint64_t>(static_cast<uint64_t>(wider), 1);
  }
  return events;
}

} // namespace htrace::format
