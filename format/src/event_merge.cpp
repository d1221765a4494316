#include "format/event_merge.h"

#include "format/error.h"
#include "format/parallel_parts.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <utility>

namespace htrace::format {

EventMerge::Cursor::Cursor(FileWindow window, size_t chunk_size, const IdMaps* id_maps)
    : data(window.data()), maps(id_maps),
      parser(window.data(), window.size(), chunk_size, window.loaded()), file(std::move(window)) {}

bool EventMerge::Cursor::advance() {
  while (!parser.next(event)) {
    if (!parser.starved()) return false;
    // The event last read stays: run() delivers it after reading the next one.
    const size_t keep =
        event.begin ? std::min(file->offset() + size_t(event.begin - data), parser.resume_offset())
                    : parser.resume_offset();
    const uint8_t* const old_data = data;
    const size_t old_offset = file->offset();
    file->slide(keep);
    data = file->data();
    parser.slide(data, file->offset(), file->loaded());
    if (event.begin) relocate(event, old_data, old_offset);
  }
  ++position;
  return true;
}

void EventMerge::Cursor::relocate(RawEvent& e, const uint8_t* old_data, size_t offset) const {
  const auto moved = [&](const uint8_t* p) {
    return data + (offset + size_t(p - old_data)) - file->offset();
  };
  e.begin = moved(e.begin);
  e.end = moved(e.end);
  e.fields = moved(e.fields);
}

EventMerge::EventMerge(const std::string& dir, const std::vector<Input>& inputs, size_t chunk_size,
                       size_t window)
    : dir_(dir), dir_fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  if (dir_fd_.get() < 0)
    throw input_error("'" + dir + "': cannot open the directory: " + std::strerror(errno));
  if (window == 0)
    window = std::clamp(kWindowBudget / std::max<size_t>(inputs.size(), 1), kMinWindow, kMaxWindow);
  ids_.reserve(inputs.size());
  for (const Input& in : inputs)
    ids_.push_back(in.id);
  inputs_ = inputs.size();
  cursors_ = std::make_unique<std::optional<Cursor>[]>(inputs_);
  std::vector<char> started(inputs_, 0);
  open_in_parts(inputs, chunk_size, window, started);
  next_bytes_.resize(inputs_);
  std::vector<Key> leaves(inputs_, kDone);
  for (uint32_t i = 0; i < inputs_; ++i) {
    Cursor& c = *cursors_[i];
    if (started[i]) {
      leaves[i] = key(c.event.time, i);
      next_bytes_[i] = {c.event.begin, c.event.end};
    } else if (c.parser.error())
      fail(i, c.parser.error(), c.parser.error_offset());
    else
      c.file.reset();
  }
  build(leaves);
}

void EventMerge::open_in_parts(const std::vector<Input>& inputs, size_t chunk_size, size_t window,
                               std::vector<char>& started) {
  run_in_parts(inputs_, parts_for(inputs_), [&](size_t part, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const std::string name = std::to_string(inputs[i].id) + ".evt";
      try {
        cursors_[i].emplace(FileWindow(dir_fd_.get(), dir_, name, window, arenas_[part]),
                            chunk_size, inputs[i].maps);
        started[i] = cursors_[i]->advance();
      } catch (const Error& e) {
        throw Error(e.kind(), "location " + std::to_string(inputs[i].id) + ": " + e.what(),
                    e.agreed());
      }
    }
  });
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
  if (error) fail(i, error.why, c.file->offset() + error.offset);
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
    RawEvent event = c.event;
    const uint64_t position = c.position;
    const uint8_t* const data = c.data;
    const size_t offset = c.parser.window_offset();
    // The input's next event is read first: then the next winner is known, and its cursor and
    // event come into the cache while this event is delivered.
    const bool more = c.advance();
    if (c.data != data || c.parser.window_offset() != offset) c.relocate(event, data, offset);
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
