// The events of many locations' event files in one stream in time order, as OTF2's global event
// reader delivers them, or window by window (run_in_windows), decoded by event_decoder.h, without a
// file descriptor, a mapping or a chunk buffer per location: each file is read through a
// FileWindow of a few KiB (opened again, relative to the directory, to read its next part) and an
// EventFileParser cursor one event at a time, and a tournament tree picks the location whose next
// event comes first. Many files are first opened in parts, each on a thread of its own.
//
// Memory per location: the cursor, 320 bytes, and its window: kWindowBudget shared out among the
// files, between kMinWindow and kMaxWindow each (a file no larger is read whole into the room it
// needs), packed with others in a CopyArena's 2 MiB slabs (few TLB entries for thousands of
// files). A window grows only for a record longer than it. A file read to its end gives its room
// back. Nothing per event.
#ifndef HTRACE_FORMAT_EVENT_MERGE_H
#define HTRACE_FORMAT_EVENT_MERGE_H

#include "format/copy_arena.h"
#include "format/event_decoder.h"
#include "format/event_file.h"
#include "format/file_descriptor.h"
#include "format/file_window.h"
#include "format/parallel_parts.h"

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
  static constexpr size_t kWindowBudget = 32 * 1024 * 1024;
  static constexpr size_t kMinWindow = 8 * 1024, kMaxWindow = 256 * 1024;

  // Opens the event file of every input in `dir` (format version and layout as event_file.h
  // reads) and reads its first window, of `window` bytes (0: as kWindowBudget says). Throws an
  // input Error naming the location and file that cannot be read.
  EventMerge(const std::string& dir, const std::vector<Input>& inputs, size_t chunk_size,
             size_t window = 0);
  EventMerge(const EventMerge&) = delete;
  EventMerge& operator=(const EventMerge&) = delete;

  // Called with the input of the next event to be delivered before the current one is: the
  // merge knows it then, so a consumer can bring its state for that input into the cache while
  // it handles the current event.
  using NextInputFn = void (*)(uint32_t input, void* user);

  // Decodes every event into `callbacks`, `metric` (Metric records) or `other`, in time order;
  // ties go to the lower input index first (pass the inputs in OTF2's order, by location id, to
  // get its global reader's order), and a file's own order is kept. The callbacks' location
  // argument is the index of the input, not its id. `next`, if given, learns each event's input
  // one event ahead. Returns the number of events; throws an input Error naming the file and
  // byte on malformed data (or a callback's interruption).
  uint64_t run(const EventDecodeCallbacks& callbacks, OTF2_EvtReaderCallback_Metric metric,
               OtherEventFn other, void* user, NextInputFn next = nullptr);

  // Called after each window of run_in_windows: every event before `end` has been delivered.
  using WindowEndFn = void (*)(uint64_t end, void* user);

  // Decodes every event as run() does, but window by window: time is cut into windows, and each
  // window delivers, input after input, each input's events before the window's end. Each
  // input's events come in file order, but the inputs' no longer interleave in time order, so a
  // consumer must accept any interleaving. The work per event then no longer grows with the
  // number of inputs: no tournament, and an input's state (its cursor and file, a consumer's
  // state for it) stays in the cache through its run of events. Windows are sized for about
  // `events_per_window` events, starting with one of `first_window` ticks, each next from the
  // density of the last; what a consumer keeps for a window (messages in flight) grows with it.
  // `next`, if given, learns each run's input as the run before it starts.
  uint64_t run_in_windows(const EventDecodeCallbacks& callbacks,
                          OTF2_EvtReaderCallback_Metric metric, OtherEventFn other, void* user,
                          WindowEndFn window_end, uint64_t first_window, uint64_t events_per_window,
                          NextInputFn next = nullptr);

private:
  // Two cache lines, both fetched one event ahead (prefetch()): the first holds what delivering
  // its event reads, the second what reading the next one reads (the parser puts its position
  // first). The window itself is touched only when it slides.
  struct alignas(64) Cursor {
    Cursor(FileWindow window, size_t chunk_size, const IdMaps* id_maps);
    RawEvent event{};      // the next event to deliver
    uint64_t position = 0; // its number in the file, from 1
    const uint8_t* data;   // the window's bytes
    const IdMaps* maps;
    EventFileParser parser;
    std::optional<FileWindow> file; // reset when read to its end
    // Reads the next event into `event`, sliding the window when the parser needs more.
    bool advance();
    // `e`, an event read while the window held file offset `offset` on at `old_data`, where its
    // bytes are now (the window keeps the event last read when it slides).
    void relocate(RawEvent& e, const uint8_t* old_data, size_t offset) const;
  };
  static constexpr size_t kCursorLines = 2;
  static_assert(sizeof(RawEvent) + 3 * sizeof(void*) == 64 &&
                    offsetof(Cursor, parser) + 32 <= kCursorLines * 64,
                "a cursor's hot part fits in kCursorLines cache lines");
  // An input's next event as one number, time then input: one comparison without a branch, and
  // no two inputs tie. An exhausted input's key is kDone, above every event's.
  using Key = unsigned __int128;
  static constexpr Key kDone = ~Key{0};
  static Key key(uint64_t time, uint32_t input) { return Key{time} << 32 | input; }
  static uint32_t input_of(Key k) { return static_cast<uint32_t>(k); }
  // A loser tree: input i is leaf n + i of an implicit binary tree of n leaves, node j's children
  // are 2j and 2j + 1, an inner node holds the key that lost the match there and node 0 the
  // winner. A new key for the winner's input plays its way up the leaf's path to the root, one
  // comparison a level: the path's nodes are known before any comparison, so their cache misses
  // overlap, where a heap's next node depends on the comparison before it.
  void replay(uint32_t input, Key k) {
    for (size_t node = (inputs_ + input) / 2; node > 0; node /= 2) {
      const Key other = tree_[node];
      const bool lost = other < k;
      tree_[node] = lost ? k : other;
      k = lost ? other : k;
    }
    tree_[0] = k;
  }
  void build(const std::vector<Key>& leaves);
  // Opens every input's file and reads its first event (`started[i]`: there is one), in parts on
  // threads of their own where there are many inputs: the opening is system calls and the first
  // touch of the windows' memory, a fixed cost per location that would otherwise come before the
  // first event is delivered.
  void open_in_parts(const std::vector<Input>& inputs, size_t chunk_size, size_t window,
                     std::vector<char>& started);
  // Fetches the input's cursor and `byte_lines` cache lines of its next bytes.
  void prefetch(uint32_t input, size_t byte_lines = 1) const;
  // A window's run of an input reads about this many lines of its file.
  static constexpr size_t kRunLines = 4;
  [[noreturn]] void fail(uint32_t input, const char* why, size_t offset) const;
  // Decodes input i's `event`, its `position`-th.
  void decode(uint32_t i, const RawEvent& event, uint64_t position,
              const EventDecodeCallbacks& callbacks, OTF2_EvtReaderCallback_Metric metric,
              OtherEventFn other, void* user);
  // After input i's last event: fails on malformed data after it, else releases its file.
  void finish_input(uint32_t i);

  std::string dir_;
  FileDescriptor dir_fd_;
  std::vector<OTF2_LocationRef> ids_;
  // The windows' bytes, one arena for each part opened at once (before the cursors: they release
  // into them).
  CopyArena arenas_[kMaxFileParts];
  // In one block (cursors are not movable): a deque allocates one per cursor this large, so that
  // finding one costs a cache miss more.
  std::unique_ptr<std::optional<Cursor>[]> cursors_;
  size_t inputs_ = 0;
  // By input, to prefetch: its next event's bytes, and where the record after it starts (read
  // when the cursor advances past the event; often in the following cache line).
  struct NextBytes {
    const uint8_t* event;
    const uint8_t* after;
  };
  std::vector<NextBytes> next_bytes_;
  std::vector<Key> tree_; // inputs_ nodes: the winner, then the inner nodes
};

} // namespace htrace::format
#endif
