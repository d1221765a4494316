// The merge htrace-report reads archives through (format/event_merge.h) against the order OTF2's
// global reader delivers: every event once, by time, ties to the lower input, each file in its
// own order; with inputs ending at different times, so that the tournament tree has ever more
// finished leaves, and input counts that make trees of one leaf, of two, of leaves at two depths
// (not a power of two) and several levels deep; and each event's input, announced to the
// consumer one event ahead; and window by window.
#include "format/event_merge.h"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <optional>
#include <otf2/otf2.h>
#include <string>
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

// Writes kInputs event files into `dir`; `expected` gets their events in the merge's order.
void write_inputs(const TempDir& dir, std::uint32_t kInputs, std::vector<Event>& expected) {
  OTF2_Archive* a = OTF2_Archive_Open(dir.path.c_str(), "traces", OTF2_FILEMODE_WRITE, kChunk,
                                      kChunk, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, nullptr), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_SetSerialCollectiveCallbacks(a), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_OpenEvtFiles(a), OTF2_SUCCESS);
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
  ASSERT_EQ(OTF2_Archive_CloseEvtFiles(a), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_Close(a), OTF2_SUCCESS);
  std::stable_sort(expected.begin(), expected.end(), [](const Event& x, const Event& y) {
    return std::tie(x.time, x.input) < std::tie(y.time, y.input);
  });
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
        std::stable_sort(sorted.begin(), sorted.end(), [](const Event& x, const Event& y) {
          return std::tie(x.time, x.input) < std::tie(y.time, y.input);
        });
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

} // namespace
