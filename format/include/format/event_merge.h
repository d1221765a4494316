// The events of many locations' event files in one stream in time order, as OTF2's global event
// reader delivers them, decoded by event_decoder.h, without a file descriptor or a chunk buffer
// per location: each file is mapped (its descriptor closed right away) and read through an
// EventFileParser cursor one event at a time, and a min-heap picks the location whose next event
// comes first.
//
// Memory per location: the cursor, ~200 bytes, and its file: one smaller than
// MappedFile::kSmallFile is read whole into memory (mapping thousands of small files costs a TLB
// flush per unmap); a larger one is mapped, and the kernel keeps the pages from the last release
// (every kReleaseStep bytes read) to the fault-around window the cursor is in (up to 64 KiB
// around a faulting page), so at most about kReleaseStep + 128 KiB of page cache, shared and
// reclaimable. A file read to its end is freed or unmapped. Nothing per event.
#ifndef HTRACE_FORMAT_EVENT_MERGE_H
#define HTRACE_FORMAT_EVENT_MERGE_H

#include "format/event_decoder.h"
#include "format/event_file.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace htrace::format {

class EventMerge {
public:
  // A location's event file: `id` names it in the directory; `maps`, if not null, are its
  // mapping tables (they must outlive the merge).
  struct Input {
    OTF2_LocationRef id;
    const IdMaps* maps = nullptr;
  };
  static constexpr size_t kReleaseStep = 64 * 1024;
  // Mappings left under vm.max_map_count for the rest of the process (its allocations too).
  static constexpr size_t kSpareMappings = 4096;

  // Maps the event file of every input in `dir` (format version and layout as event_file.h
  // reads). Throws an input Error naming a file that cannot be mapped, or vm.max_map_count if the
  // process may not map that many files.
  EventMerge(const std::string& dir, const std::vector<Input>& inputs, size_t chunk_size);
  EventMerge(const EventMerge&) = delete;
  EventMerge& operator=(const EventMerge&) = delete;

  // Decodes every event into `callbacks`, `metric` (Metric records) or `other`, in time order;
  // ties go to the lower input index first (pass the inputs in OTF2's order, by location id, to
  // get its global reader's order), and a file's own order is kept. The callbacks' location
  // argument is the index of the input, not its id. Returns the number of events; throws an
  // input Error naming the file and byte on malformed data (or a callback's interruption).
  uint64_t run(const EventDecodeCallbacks& callbacks, OTF2_EvtReaderCallback_Metric metric,
               OtherEventFn other, void* user);

private:
  struct Cursor {
    Cursor(const std::string& path, size_t chunk_size, const IdMaps* id_maps);
    std::optional<MappedFile> file; // reset when read to its end
    EventFileParser parser;
    RawEvent event{};      // the next event to deliver
    uint64_t position = 0; // its number in the file, from 1
    size_t release_at = 0; // the offset after which mapped pages are given back next
    const IdMaps* maps;
    bool advance();
  };
  // An input's next event as one number, time then input: one comparison without a branch.
  using Key = unsigned __int128;
  static Key key(uint64_t time, uint32_t input) { return Key{time} << 32 | input; }
  static uint32_t input_of(Key k) { return static_cast<uint32_t>(k); }
  // The heap has four children a node: half the levels of a binary one, and the four keys
  // compared at a level are 64 bytes, one or two cache lines.
  static constexpr size_t kArity = 4;
  // The child of `i` with the smallest key, or the heap's size if `i` has none.
  size_t smallest_child(size_t i) const {
    const size_t n = heap_.size(), first = kArity * i + 1;
    if (first >= n) return n;
    const size_t end = first + kArity < n ? first + kArity : n;
    size_t best = first;
    for (size_t c = first + 1; c < end; ++c)
      best = heap_[c] < heap_[best] ? c : best;
    return best;
  }
  void sift_down(size_t i);
  void replace_top(Key k);
  void prefetch(uint32_t input) const;
  [[noreturn]] void fail(uint32_t input, const char* why, size_t offset) const;

  std::string dir_;
  std::vector<OTF2_LocationRef> ids_;
  // In one block (cursors are not movable): a deque allocates one per cursor this large, so that
  // finding one costs a cache miss more.
  std::unique_ptr<std::optional<Cursor>[]> cursors_;
  size_t inputs_ = 0;
  std::vector<const uint8_t*> next_event_; // by input: where its next event is, to prefetch
  std::vector<Key> heap_;
};

} // namespace htrace::format
#endif
