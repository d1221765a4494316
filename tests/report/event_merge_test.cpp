// The merge htrace-report reads archives through (format/event_merge.h) against the order OTF2's
// global reader delivers: every event once, by time, ties to the lower input, each file in its
// own order; with inputs ending at different times, so that the tournament tree has ever more
// finished leaves, and input counts that make trees of one leaf, of two, of leaves at two depths
// (not a power of two) and several levels deep; and each event's input, announced to the
// consumer one event ahead; and window by window; and each file through a window of its bytes of
// any size, down to one byte (records cut anywhere, chunks opened past a window, records longer
// than the window), with a malformed byte reported at its offset in the file; and many files
// opened in parts at once, their errors reported as one thread would.
#include "format/copy_arena.h"
#include "format/error.h"
#include "format/event_file.h"
#include "format/event_merge.h"
#include "format/file_window.h"

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <optional>
#include <otf2/otf2.h>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <vector>

namespace {

constexpr std::uint64_t kChunk = 256 * 1024; // OTF2's smallest

OTF2_FlushType flush_always(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp no_time(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
OTF2_FlushCallbacks flush_callbacks = {flush_always, no_time};

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/htrace-merge-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

struct Event {
  std::uint32_t input;
  std::uint64_t time;
  std::uint32_t region; // the event's number in its file
  bool operator==(const Event& o) const {
    return std::tie(input, time, region) == std::tie(o.input, o.time, o.region);
  }
};

// What the merge delivers, and what it says between events (the next input, a window's end), each
// with the number of events delivered before it.
struct Log {
  std::vector<Event> delivered;
  std::vector<std::uint64_t> said;
  std::vector<std::size_t> said_after;
  void say(std::uint64_t what) {
    said.push_back(what);
    said_after.push_back(delivered.size());
  }
};

OTF2_CallbackCode collect(OTF2_LocationRef input, OTF2_TimeStamp time, uint64_t, void* user,
                          OTF2_AttributeList*, OTF2_RegionRef region) {
  static_cast<Log*>(user)->delivered.push_back({static_cast<std::uint32_t>(input), time, region});
  return OTF2_CALLBACK_SUCCESS;
}

void announce(std::uint32_t input, void* user) {
  static_cast<Log*>(user)->say(input);
}

void window_end(std::uint64_t end, void* user) {
  static_cast<Log*>(user)->say(end);
}

// An archive in `dir` for event files, each flushed as it is written.
void open_archive(const TempDir& dir, OTF2_Archive** archive) {
  OTF2_Archive* a = OTF2_Archive_Open(dir.path.c_str(), "traces", OTF2_FILEMODE_WRITE, kChunk,
                                      kChunk, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  ASSERT_NE(a, nullptr);
  *archive = a;
  ASSERT_EQ(OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, nullptr), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_SetSerialCollectiveCallbacks(a), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_OpenEvtFiles(a), OTF2_SUCCESS);
}

void close_archive(OTF2_Archive* a) {
  ASSERT_EQ(OTF2_Archive_CloseEvtFiles(a), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_Close(a), OTF2_SUCCESS);
}

// By time, ties to the lower input, each input's own order kept: the merge's order.
void sort_in_merge_order(std::vector<Event>& events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
    return std::tie(x.time, x.input) < std::tie(y.time, y.input);
  });
}

// Writes kInputs event files into `dir`; `expected` gets their events in the merge's order.
void write_inputs(const TempDir& dir, std::uint32_t kInputs, std::vector<Event>& expected) {
  OTF2_Archive* a = nullptr;
  open_archive(dir, &a);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  // Input i has 20 + 7 * (i % 11) events at times that step by 0 to 2 from i % 5: many equal
  // times across inputs, and repeated times in a file.
  std::srand(7);
  for (std::uint32_t i = 0; i < kInputs; ++i) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, i);
    ASSERT_NE(w, nullptr);
    std::uint64_t t = i % 5;
    for (std::uint32_t k = 0; k < 20 + 7 * (i % 11); ++k) {
      t += static_cast<std::uint64_t>(std::rand() % 3);
      ASSERT_EQ(OTF2_EvtWriter_Enter(w, nullptr, t, k), OTF2_SUCCESS);
      expected.push_back({i, t, k});
    }
    ASSERT_EQ(OTF2_Archive_CloseEvtWriter(a, w), OTF2_SUCCESS);
  }
  close_archive(a);
  sort_in_merge_order(expected);
}

std::vector<htrace::format::EventMerge::Input> inputs_of(std::uint32_t kInputs) {
  std::vector<htrace::format::EventMerge::Input> inputs;
  for (std::uint32_t i = 0; i < kInputs; ++i)
    inputs.push_back({i, nullptr});
  return inputs;
}

// kInputs event files written into a new directory, their events in the merge's order, and a merge
// of them whose Enter events go to collect().
struct Merged {
  TempDir dir;
  std::vector<Event> expected;
  std::optional<htrace::format::EventMerge> merge;
  htrace::format::EventDecodeCallbacks callbacks;
  explicit Merged(std::uint32_t kInputs) {
    write_inputs(dir, kInputs, expected);
    if (::testing::Test::HasFatalFailure()) return;
    merge.emplace(dir.path + "/traces", inputs_of(kInputs), kChunk);
    callbacks.Enter = collect;
  }
};

void ignore(void*, OTF2_TimeStamp, int) {}

void expect_merged_in_order(std::uint32_t kInputs) {
  Merged m(kInputs);
  if (::testing::Test::HasFatalFailure()) return;
  const std::vector<Event>& expected = m.expected;
  Log log;
  const std::uint64_t n = m.merge->run(m.callbacks, nullptr, ignore, &log);
  const std::vector<Event>& got = log.delivered;
  EXPECT_EQ(n, expected.size());
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t e = 0; e < got.size(); ++e)
    ASSERT_TRUE(got[e] == expected[e])
        << "event " << e << ": got input " << got[e].input << " time " << got[e].time << " number "
        << got[e].region << ", expected input " << expected[e].input << " time " << expected[e].time
        << " number " << expected[e].region;
}

TEST(EventMerge, DeliversInTimeOrderTiesToTheLowerInput) {
  for (const std::uint32_t inputs : {1u, 2u, 3u, 70u}) {
    SCOPED_TRACE(std::to_string(inputs) + " inputs");
    expect_merged_in_order(inputs);
  }
}

// The next-input hook names every event's input, in order, before the event ahead of it is
// delivered (the first one before any): consumers fetch that input's state one event early.
TEST(EventMerge, AnnouncesEachEventsInputOneEventAhead) {
  for (const std::uint32_t kInputs : {1u, 3u, 70u}) {
    SCOPED_TRACE(std::to_string(kInputs) + " inputs");
    Merged m(kInputs);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    const std::vector<Event>& expected = m.expected;
    Log log;
    m.merge->run(m.callbacks, nullptr, ignore, &log, announce);
    ASSERT_EQ(log.delivered.size(), expected.size());
    ASSERT_EQ(log.said.size(), expected.size());
    for (std::size_t e = 0; e < expected.size(); ++e) {
      ASSERT_EQ(log.delivered[e].input, expected[e].input) << "event " << e;
      ASSERT_EQ(log.said[e], expected[e].input) << "announcement " << e;
      ASSERT_EQ(log.said_after[e], e == 0 ? 0 : e - 1) << "announcement " << e;
    }
  }
}

// Window by window: every event once, each file in its own order; in a window the inputs come
// one after another, and a window's end says truly that every earlier event was delivered and no
// later one yet, whatever the first window and the size windows aim for.
TEST(EventMerge, DeliversWindowByWindow) {
  for (const std::uint32_t kInputs : {1u, 3u, 70u})
    for (const std::uint64_t first : {1u, 7u, 1000u})
      for (const std::uint64_t per_window : {1u, 16u, 1000u}) {
        SCOPED_TRACE(std::to_string(kInputs) + " inputs, first window " + std::to_string(first) +
                     ", " + std::to_string(per_window) + " events per window");
        Merged m(kInputs);
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
        const std::vector<Event>& expected = m.expected;
        Log w;
        const std::uint64_t n = m.merge->run_in_windows(m.callbacks, nullptr, ignore, &w,
                                                        window_end, first, per_window);
        EXPECT_EQ(n, expected.size());
        std::vector<Event> sorted = w.delivered;
        sort_in_merge_order(sorted);
        ASSERT_TRUE(sorted == expected) << "not every event once, or a file out of its order";
        ASSERT_FALSE(w.said.empty());
        EXPECT_EQ(w.said_after.back(), w.delivered.size());
        std::size_t from = 0;
        for (std::size_t k = 0; k < w.said.size(); ++k) {
          for (std::size_t e = from; e < w.said_after[k]; ++e) {
            ASSERT_LT(w.delivered[e].time, w.said[k]) << "window " << k;
            if (e > from) {
              ASSERT_LE(w.delivered[e - 1].input, w.delivered[e].input) << "window " << k;
            }
          }
          for (std::size_t e = w.said_after[k]; e < w.delivered.size(); ++e)
            ASSERT_GE(w.delivered[e].time, w.said[k]) << "window " << k;
          from = w.said_after[k];
        }
      }
}

// Files that make a window slide in every way: input 0 spans two chunks (the first ends in
// padding), input 1's events carry attribute lists of 1 to 6 attributes (records up to ~60 bytes),
// input 2 is a few events.
void write_varied_inputs(const TempDir& dir, std::vector<Event>& expected) {
  OTF2_Archive* a = nullptr;
  open_archive(dir, &a);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  OTF2_AttributeList* attributes = OTF2_AttributeList_New();
  const std::uint32_t counts[] = {30000, 50, 5};
  for (std::uint32_t i = 0; i < 3; ++i) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, i);
    ASSERT_NE(w, nullptr);
    std::uint64_t t = i;
    for (std::uint32_t k = 0; k < counts[i]; ++k) {
      t += 1 + (k % 3 == 0 ? 1000000000u : 0u); // timestamps of 1 to 5 bytes
      for (std::uint32_t n = 0; i == 1 && n <= k % 6; ++n)
        ASSERT_EQ(OTF2_AttributeList_AddUint64(attributes, n, ~std::uint64_t{0} / (k + 1)),
                  OTF2_SUCCESS);
      ASSERT_EQ(OTF2_EvtWriter_Enter(w, i == 1 ? attributes : nullptr, t, k), OTF2_SUCCESS);
      expected.push_back({i, t, k});
    }
    ASSERT_EQ(OTF2_Archive_CloseEvtWriter(a, w), OTF2_SUCCESS);
  }
  OTF2_AttributeList_Delete(attributes);
  close_archive(a);
  sort_in_merge_order(expected);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(EventMerge, ReadsEachFileThroughAWindowOfAnySize) {
  TempDir dir;
  std::vector<Event> expected;
  write_varied_inputs(dir, expected);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::string events = dir.path + "/traces";
  ASSERT_GT(read_file(events + "/0.evt").size(), kChunk) << "input 0 spans two chunks";
  htrace::format::EventDecodeCallbacks callbacks;
  callbacks.Enter = collect;
  for (const std::size_t window : {1u, 7u, 64u, 100u, 4096u, 0u}) {
    SCOPED_TRACE("window " + std::to_string(window));
    {
      htrace::format::EventMerge merge(events, inputs_of(3), kChunk, window);
      Log log;
      EXPECT_EQ(merge.run(callbacks, nullptr, ignore, &log), expected.size());
      ASSERT_TRUE(log.delivered == expected) << "run(): not the events in time order";
    }
    htrace::format::EventMerge merge(events, inputs_of(3), kChunk, window);
    Log log;
    EXPECT_EQ(merge.run_in_windows(callbacks, nullptr, ignore, &log, nullptr, 1000, 64),
              expected.size());
    std::vector<Event> sorted = log.delivered;
    sort_in_merge_order(sorted);
    ASSERT_TRUE(sorted == expected) << "run_in_windows(): not every event once in file order";
  }
}

// The parser through a FileWindow of any size gives every event's bytes (its attribute list
// included) and time as it does over the whole file.
TEST(EventMerge, AWindowedParserSeesEachEventsBytesAsTheWholeFileShows) {
  TempDir dir;
  std::vector<Event> expected;
  write_varied_inputs(dir, expected);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::string events = dir.path + "/traces";
  const htrace::format::FileDescriptor events_dir(::open(events.c_str(), O_RDONLY | O_DIRECTORY));
  ASSERT_GE(events_dir.get(), 0);
  for (const char* name : {"0.evt", "1.evt"}) {
    const std::string bytes = read_file(events + "/" + name);
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    for (const std::size_t window : {1u, 7u, 64u, 1000u}) {
      SCOPED_TRACE(std::string(name) + ", window " + std::to_string(window));
      htrace::format::CopyArena arena;
      htrace::format::FileWindow file(events_dir.get(), events, name, window, arena);
      htrace::format::EventFileParser whole(data, bytes.size(), kChunk);
      htrace::format::EventFileParser parser(file.data(), file.size(), kChunk, file.loaded());
      htrace::format::RawEvent want{}, got{};
      for (std::size_t n = 0; whole.next(want); ++n) {
        while (!parser.next(got)) {
          ASSERT_TRUE(parser.starved()) << "event " << n << ": " << parser.error();
          file.slide(parser.resume_offset());
          parser.slide(file.data(), file.offset(), file.loaded());
        }
        ASSERT_EQ(std::string(got.begin, got.end), std::string(want.begin, want.end))
            << "event " << n;
        ASSERT_EQ(got.time, want.time) << "event " << n;
        ASSERT_EQ(file.offset() + std::size_t(got.begin - file.data()),
                  std::size_t(want.begin - data))
            << "event " << n;
      }
      EXPECT_FALSE(parser.next(got));
      EXPECT_FALSE(parser.starved());
      EXPECT_EQ(parser.error(), nullptr);
    }
  }
}

// A chunk padded far beyond the window: however the window falls (the chunk's end, the padding,
// the next chunk's header cut anywhere), the events come as they are, and nothing from the padding.
TEST(EventMerge, ReadsPastLongPaddingThroughAnyWindow) {
  TempDir dir;
  ASSERT_EQ(::mkdir((dir.path + "/traces").c_str(), 0755), 0);
  constexpr std::size_t kSmallChunk = 256;
  const auto header = [](std::vector<std::uint8_t>& f, std::uint8_t event) {
    const std::uint8_t h[18] = {3, 0x42, event, 0, 0, 0, 0, 0, 0, 0, event, 0, 0, 0, 0, 0, 0, 0};
    f.insert(f.end(), h, h + 18);
  };
  std::vector<std::uint8_t> file;
  header(file, 1);
  const std::uint8_t enter[] = {5, 7, 0, 0, 0, 0, 0, 0, 0, 12, 1, 1}; // time 7, Enter(region 1)
  file.insert(file.end(), enter, enter + sizeof enter);
  file.resize(kSmallChunk, 0); // END_OF_CHUNK and its padding
  header(file, 2);
  const std::uint8_t leave[] = {5, 9, 0, 0, 0, 0, 0, 0, 0, 13, 1, 1, 2, 1}; // Leave; END_OF_FILE
  file.insert(file.end(), leave, leave + sizeof leave);
  std::ofstream(dir.path + "/traces/0.evt", std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  htrace::format::EventDecodeCallbacks callbacks;
  callbacks.Enter = collect;
  callbacks.Leave = collect;
  const std::vector<Event> expected = {{0, 7, 1}, {0, 9, 1}};
  for (std::size_t window = 1; window <= file.size(); ++window) {
    SCOPED_TRACE("window " + std::to_string(window));
    htrace::format::EventMerge merge(dir.path + "/traces", inputs_of(1), kSmallChunk, window);
    Log log;
    EXPECT_EQ(merge.run(callbacks, nullptr, ignore, &log), 2u);
    ASSERT_TRUE(log.delivered == expected);
  }
}

TEST(EventMerge, NamesAMalformedRecordsOffsetInItsFile) {
  TempDir dir;
  std::vector<Event> expected;
  write_varied_inputs(dir, expected);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  // The 25,000th event of input 0 (in its second chunk) turned into an unknown buffer record.
  const std::string path = dir.path + "/traces/0.evt";
  std::string bytes = read_file(path);
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  htrace::format::EventFileParser parser(data, bytes.size(), kChunk);
  htrace::format::RawEvent e{};
  for (int k = 0; k < 25000; ++k)
    ASSERT_TRUE(parser.next(e));
  const std::size_t offset = static_cast<std::size_t>(e.begin - data);
  ASSERT_GT(offset, kChunk);
  bytes[offset] = 4;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  htrace::format::EventDecodeCallbacks callbacks;
  callbacks.Enter = collect;
  for (const std::size_t window : {64u, 1000u, 0u}) {
    SCOPED_TRACE("window " + std::to_string(window));
    htrace::format::EventMerge merge(dir.path + "/traces", inputs_of(3), kChunk, window);
    Log log;
    try {
      merge.run(callbacks, nullptr, ignore, &log);
      ADD_FAILURE() << "no error";
    } catch (const htrace::Error& error) {
      EXPECT_NE(std::string(error.what())
                    .find("corrupt event file at byte " + std::to_string(offset) +
                          " (unknown buffer record)"),
                std::string::npos)
          << error.what();
    }
  }
}

std::size_t mappings() {
  std::ifstream maps("/proc/self/maps");
  std::size_t n = 0;
  for (std::string line; std::getline(maps, line);)
    ++n;
  return n;
}

// Files larger than a window take no mapping each (vm.max_map_count, 65,530 by default, would
// limit a merge to that many files): 64 files of 70 KB, against the memory mappings the process
// has before and during the merge.
TEST(EventMerge, TakesNoMappingPerFile) {
  TempDir dir;
  OTF2_Archive* a = nullptr;
  open_archive(dir, &a);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  constexpr std::uint32_t kFiles = 64, kEvents = 6000;
  for (std::uint32_t i = 0; i < kFiles; ++i) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, i);
    ASSERT_NE(w, nullptr);
    for (std::uint32_t k = 0; k < kEvents; ++k)
      ASSERT_EQ(OTF2_EvtWriter_Enter(w, nullptr, 1000000000ull * k + i, k), OTF2_SUCCESS);
    ASSERT_EQ(OTF2_Archive_CloseEvtWriter(a, w), OTF2_SUCCESS);
  }
  close_archive(a);
  ASSERT_GT(read_file(dir.path + "/traces/0.evt").size(), 64u * 1024);
  const std::size_t before = mappings();
  htrace::format::EventMerge merge(dir.path + "/traces", inputs_of(kFiles), kChunk);
  EXPECT_LT(mappings(), before + kFiles / 4);
  htrace::format::EventDecodeCallbacks callbacks;
  callbacks.Enter = collect;
  Log log;
  EXPECT_EQ(merge.run(callbacks, nullptr, ignore, &log), std::uint64_t{kFiles} * kEvents);
}

// Enough inputs to be opened in parts on threads of their own (where the machine has cores), and
// merged as one.
TEST(EventMerge, OpensManyFilesInPartsAndMergesThemAsOne) {
  expect_merged_in_order(1500);
}

// An input that cannot be opened fails the merge wherever its part is; of two, the lower input
// is named, as one thread opening them in order would.
TEST(EventMerge, NamesTheFirstFileThatCannotBeOpenedWhateverItsPart) {
  constexpr std::uint32_t kInputs = 1500;
  TempDir dir;
  std::vector<Event> expected;
  write_inputs(dir, kInputs, expected);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::string events = dir.path + "/traces";
  const auto error_of_merge = [&]() -> std::string {
    try {
      htrace::format::EventMerge merge(events, inputs_of(kInputs), kChunk);
      return "no error";
    } catch (const htrace::Error& error) {
      return error.what();
    }
  };
  ASSERT_EQ(::unlink((events + "/1499.evt").c_str()), 0);
  EXPECT_NE(error_of_merge().find("location 1499: '" + events + "/1499.evt': cannot open"),
            std::string::npos)
      << error_of_merge();
  ASSERT_EQ(::unlink((events + "/3.evt").c_str()), 0);
  EXPECT_NE(error_of_merge().find("location 3: '" + events + "/3.evt': cannot open"),
            std::string::npos)
      << error_of_merge();
}

// A window onto a file no larger than it holds the whole file in just the room the file needs (the
// next window's bytes follow at once); a larger file's window holds its first `capacity` bytes.
TEST(FileWindow, TakesTheRoomAFileNeedsAndLearnsItsSize) {
  TempDir dir;
  const auto write = [&](const std::string& name, std::size_t size) {
    std::ofstream(dir.path + "/" + name, std::ios::binary) << std::string(size, 'x');
  };
  write("small", 100);
  write("exact", 64);
  write("large", 1000);
  write("empty", 0);
  const htrace::format::FileDescriptor fd(::open(dir.path.c_str(), O_RDONLY | O_DIRECTORY));
  htrace::format::CopyArena arena;
  htrace::format::FileWindow small(fd.get(), dir.path, "small", 64 * 1024, arena);
  EXPECT_EQ(small.size(), 100u);
  EXPECT_EQ(small.loaded(), 100u);
  htrace::format::FileWindow exact(fd.get(), dir.path, "exact", 64, arena);
  EXPECT_EQ(exact.data(), small.data() + 100);
  EXPECT_EQ(exact.size(), 64u);
  EXPECT_EQ(exact.loaded(), 64u);
  htrace::format::FileWindow large(fd.get(), dir.path, "large", 64, arena);
  EXPECT_EQ(large.data(), exact.data() + 64);
  EXPECT_EQ(large.size(), 1000u);
  EXPECT_EQ(large.loaded(), 64u);
  large.slide(960);
  EXPECT_EQ(large.loaded(), 40u);
  htrace::format::FileWindow empty(fd.get(), dir.path, "empty", 64, arena);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.loaded(), 0u);
}

} // namespace
