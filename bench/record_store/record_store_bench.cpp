// Times the phases of htrace-correct's single-read path on one archive, serially, all locations in
// this process, alternating the variants within each repetition:
//   read        every event read, timestamps kept (store callbacks without a store: --check mode)
//   read+store  the same, every record also kept in a RecordStore
//   write       every stored record written to a new archive (write_stored_events)
//   copy        read and write each record in one callback (register_copy_events), for comparison
// Usage: record_store_bench ARCHIVE_DIR WORK_DIR [REPEATS]
#include "correct/record_store.h"
#include "format/anchor_file.h"
#include "format/otf2_library.h"
#include "format/record_tables.h"
#include "process_stats.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <otf2/otf2.h>
#include <string>
#include <vector>

namespace {

using namespace htrace::bench_stats;
using namespace htrace::correct;
using namespace htrace::format;

struct Times {
  double wall = 0, cpu = 0;
};

template <class F> Times timed(F fn) {
  auto w0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  fn();
  double c1 = cpu_seconds();
  auto w1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double>(w1 - w0).count(), c1 - c0};
}

void must(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS) {
    std::fprintf(stderr, "record_store_bench: error: %s: %s\n", what,
                 OTF2_Error_GetDescription(rc));
    std::exit(1);
  }
}

class Input {
public:
  explicit Input(const std::string& anchor) : reader_(OTF2_Reader_Open(anchor.c_str())) {
    if (!reader_) {
      std::fprintf(stderr, "record_store_bench: error: '%s': cannot open\n", anchor.c_str());
      std::exit(1);
    }
    OTF2_Reader_SetSerialCollectiveCallbacks(reader_);
    uint64_t n = 0;
    must(OTF2_Reader_GetNumberOfLocations(reader_, &n), "locations");
    // Location ids of the generated archives are 0..n-1.
    for (uint64_t l = 0; l < n; ++l) {
      locations.push_back(l);
      OTF2_Reader_SelectLocation(reader_, l);
    }
    must(OTF2_Reader_OpenEvtFiles(reader_), "open event files");
  }
  ~Input() {
    OTF2_Reader_CloseEvtFiles(reader_);
    OTF2_Reader_Close(reader_);
  }
  // Reads all events of location l with `callbacks` and `user_data`.
  uint64_t read(OTF2_LocationRef l, OTF2_EvtReaderCallbacks* callbacks, void* user_data) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader_, l);
    OTF2_Reader_RegisterEvtCallbacks(reader_, er, callbacks, user_data);
    uint64_t n = 0;
    must(OTF2_Reader_ReadAllLocalEvents(reader_, er, &n), "read events");
    OTF2_Reader_CloseEvtReader(reader_, er);
    return n;
  }
  std::vector<OTF2_LocationRef> locations;

private:
  OTF2_Reader* reader_;
};

class Output {
public:
  explicit Output(const std::string& dir) {
    std::filesystem::remove_all(dir);
    ar_ = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                            4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    OTF2_Archive_SetFlushCallbacks(ar_, &kFlushAlways, nullptr);
    OTF2_Archive_SetSerialCollectiveCallbacks(ar_);
    must(OTF2_Archive_OpenEvtFiles(ar_), "open output event files");
  }
  ~Output() {
    OTF2_Archive_CloseEvtFiles(ar_);
    OTF2_Archive_Close(ar_);
  }
  OTF2_EvtWriter* writer(OTF2_LocationRef l) { return OTF2_Archive_GetEvtWriter(ar_, l); }
  void close(OTF2_EvtWriter* w) { OTF2_Archive_CloseEvtWriter(ar_, w); }

private:
  OTF2_Archive* ar_;
};

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: record_store_bench ARCHIVE_DIR WORK_DIR [REPEATS]\n");
    return 2;
  }
  const std::string anchor = find_anchor(argv[1]), work = argv[2];
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  std::filesystem::create_directories(work);
  OTF2_EvtReaderCallbacks* store_cbs = OTF2_EvtReaderCallbacks_New();
  register_store_events(store_cbs);
  OTF2_EvtReaderCallbacks* copy_cbs = OTF2_EvtReaderCallbacks_New();
  register_copy_events(copy_cbs);

  enum { kRead, kStore, kWrite, kCopy, kPhases };
  const char* names[kPhases] = {"read (times only)", "read+store", "write from store",
                                "copy (read+write)"};
  std::vector<double> wall[kPhases], cpu[kPhases];
  uint64_t events = 0, store_bytes = 0, store_mapped = 0;
  auto record = [&](int phase, Times t) {
    wall[phase].push_back(t.wall);
    cpu[phase].push_back(t.cpu);
  };
  // Warm-up pass: the page cache holds the input, and each location's event count is known (the
  // engine knows it from the definitions), so every phase reserves its timestamps up front.
  std::vector<size_t> per_location;
  {
    Input in(anchor);
    for (OTF2_LocationRef l : in.locations) {
      InputTimes t;
      EventStoreSink sink{&t, nullptr};
      in.read(l, store_cbs, &sink);
      per_location.push_back(t.size());
    }
  }
  const size_t nloc = per_location.size();
  auto fresh_times = [&] {
    std::vector<InputTimes> times(nloc);
    for (size_t i = 0; i < nloc; ++i)
      times[i].reserve(per_location[i]);
    return times;
  };
  for (int r = 0; r < repeats; ++r) {
    Input in(anchor);
    std::vector<InputTimes> times = fresh_times();
    record(kRead, timed([&] {
             for (size_t i = 0; i < nloc; ++i) {
               EventStoreSink sink{&times[i], nullptr};
               in.read(in.locations[i], store_cbs, &sink);
             }
           }));
    times = fresh_times();
    std::vector<RecordStore> stores(nloc);
    Input in2(anchor);
    record(kStore, timed([&] {
             for (size_t i = 0; i < nloc; ++i) {
               EventStoreSink sink{&times[i], &stores[i]};
               in2.read(in2.locations[i], store_cbs, &sink);
             }
           }));
    std::vector<uint64_t> counts(static_cast<size_t>(event_record_type_count()), 0);
    std::vector<EventArray<int64_t>> decoded(nloc); // (the engine produces them in chunks)
    for (size_t i = 0; i < nloc; ++i)
      decoded[i] = times[i].decode();
    record(kWrite, timed([&] {
             Output out(work + "/from_store");
             for (size_t i = 0; i < nloc; ++i) {
               OTF2_EvtWriter* w = out.writer(in.locations[i]);
               must(write_stored_events(stores[i], decoded[i].data(), decoded[i].size(), w,
                                        counts.data()),
                    "write stored events");
               out.close(w);
             }
           }));
    events = 0, store_bytes = 0, store_mapped = 0;
    for (size_t i = 0; i < nloc; ++i) {
      events += stores[i].records();
      store_bytes += stores[i].bytes();
      store_mapped += stores[i].capacity_bytes();
    }
    stores.clear();
    Input in3(anchor);
    record(kCopy, timed([&] {
             Output out(work + "/copy");
             UnchangedEvents sink;
             for (OTF2_LocationRef l : in3.locations) {
               sink.w = out.writer(l);
               in3.read(l, copy_cbs, &sink);
               out.close(sink.w);
             }
           }));
  }
  OTF2_EvtReaderCallbacks_Delete(store_cbs);
  OTF2_EvtReaderCallbacks_Delete(copy_cbs);

  const double ev = static_cast<double>(events);
  std::printf("events %.0f, repeats %d, medians (wall / CPU user+sys), ns per event\n", ev,
              repeats);
  double ns[kPhases];
  for (int p = 0; p < kPhases; ++p) {
    ns[p] = median(cpu[p]) / ev * 1e9;
    std::printf("  %-20s %7.3f s  %6.1f ns/event wall  %6.1f ns/event CPU\n", names[p],
                median(wall[p]), median(wall[p]) / ev * 1e9, ns[p]);
  }
  std::printf("store cost (read+store - read):        %5.1f ns/event CPU\n",
              ns[kStore] - ns[kRead]);
  std::printf("direct write estimate (copy - read):   %5.1f ns/event CPU\n", ns[kCopy] - ns[kRead]);
  std::printf("single-read path (read+store + write): %5.1f ns/event CPU = %.2fx the copy\n",
              ns[kStore] + ns[kWrite], (ns[kStore] + ns[kWrite]) / ns[kCopy]);
  std::printf("store size %.2f bytes/event (%.1f MiB mapped)\n", store_bytes / ev,
              store_mapped / 1048576.0);
  std::filesystem::remove_all(work + "/from_store");
  std::filesystem::remove_all(work + "/copy");
  return 0;
}
