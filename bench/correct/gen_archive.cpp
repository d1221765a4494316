// Writes a synthetic MPI trace for the htrace-correct benchmark: P processes in a ring, each
// iteration a compute region, a send to the right neighbour, a receive from the left one, and an
// allreduce every 50 iterations (~8.1 events per iteration). Odd processes get a clock skewed by
// --skew ns so the trace holds violations to correct.
// Usage: gen_archive OUT_DIR [--processes P] [--events N (total)] [--skew NS] [--chunk BYTES]
// --chunk: the event chunk size (default 1 MiB, OTF2's least 256 KiB; the definition chunk is 4
// times it). OTF2's writer takes both per location: 2,048 processes take 47 s with the default,
// 2.7 s with 256 KiB.
#include "format/otf2_library.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <otf2/otf2.h>
#include <string>
#include <vector>

namespace {

void must(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS) {
    std::fprintf(stderr, "gen_archive: error: %s: %s\n", what, OTF2_Error_GetDescription(rc));
    std::exit(1);
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: gen_archive OUT_DIR [--processes P] [--events N] [--skew NS] [--chunk BYTES]\n");
    return 2;
  }
  std::string out = argv[1];
  uint32_t procs = 4;
  uint64_t total = 10000000;
  int64_t skew = 3000;
  uint64_t chunk = 1024 * 1024;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--processes"))
      procs = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--events"))
      total = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--skew"))
      skew = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--chunk"))
      chunk = std::strtoull(argv[i + 1], nullptr, 10);
  }
  const uint64_t iterations = total / procs * 50 / 404; // 8.08 events per iteration
  OTF2_Archive* ar = OTF2_Archive_Open(out.c_str(), "traces", OTF2_FILEMODE_WRITE, chunk, 4 * chunk,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar) return std::fprintf(stderr, "gen_archive: error: '%s': cannot create\n", out.c_str()), 1;
  OTF2_Archive_SetFlushCallbacks(ar, &htrace::format::kFlushAlways, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  must(OTF2_Archive_OpenEvtFiles(ar), "open event files");
  enum Region : uint32_t { kMain, kCompute, kSend, kRecv, kAllreduce };
  const int64_t base = 1000000, step = 10000;
  uint64_t last = 0;
  std::vector<uint64_t> counts(procs);
  for (uint32_t p = 0; p < procs; ++p) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar, p);
    const int64_t off = (p % 2) ? -skew : 0;
    auto ts = [&](int64_t t) { return static_cast<OTF2_TimeStamp>(t + off); };
    uint32_t right = (p + 1) % procs, left = (p + procs - 1) % procs;
    // Processes enter the allreduce in rank order, 10 ns apart up to 100 processes and within 1 us
    // for any P, so that each enters (+8000 + arrival) and begins (10 ns later) before it ends
    // (+9500).
    const int64_t arrival = static_cast<int64_t>(p) * 1000 / std::max<int64_t>(procs, 100);
    must(OTF2_EvtWriter_Enter(w, nullptr, ts(base - 500), kMain), "write");
    for (uint64_t i = 0; i < iterations; ++i) {
      int64_t t = base + static_cast<int64_t>(i) * step +
                  (static_cast<int64_t>((i * 7919 + p * 104729) % 997));
      int64_t t0 = base + static_cast<int64_t>(i) * step;
      OTF2_EvtWriter_Enter(w, nullptr, ts(t), kCompute);
      OTF2_EvtWriter_Leave(w, nullptr, ts(t0 + 5000), kCompute);
      OTF2_EvtWriter_Enter(w, nullptr, ts(t0 + 5100), kSend);
      OTF2_EvtWriter_MpiSend(w, nullptr, ts(t0 + 5200), right, 0, 0, 1024);
      OTF2_EvtWriter_Leave(w, nullptr, ts(t0 + 5300), kSend);
      OTF2_EvtWriter_Enter(w, nullptr, ts(t0 + 5400), kRecv);
      OTF2_EvtWriter_MpiRecv(w, nullptr, ts(t0 + 7500), left, 0, 0, 1024);
      OTF2_EvtWriter_Leave(w, nullptr, ts(t0 + 7600), kRecv);
      if (i % 50 == 49) {
        OTF2_EvtWriter_Enter(w, nullptr, ts(t0 + 8000 + arrival), kAllreduce);
        OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, ts(t0 + 8010 + arrival));
        OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, ts(t0 + 9500), OTF2_COLLECTIVE_OP_ALLREDUCE, 0,
                                        OTF2_UNDEFINED_UINT32, 8, 8);
        OTF2_EvtWriter_Leave(w, nullptr, ts(t0 + 9600), kAllreduce);
      }
    }
    int64_t end = base + static_cast<int64_t>(iterations) * step + 1000;
    must(OTF2_EvtWriter_Leave(w, nullptr, ts(end), kMain), "write");
    must(OTF2_EvtWriter_GetNumberOfEvents(w, &counts[p]), "count");
    last = std::max<uint64_t>(last, static_cast<uint64_t>(end));
    must(OTF2_Archive_CloseEvtWriter(ar, w), "close event writer");
  }
  must(OTF2_Archive_CloseEvtFiles(ar), "close event files");
  must(OTF2_Archive_OpenDefFiles(ar), "open def files");
  for (uint32_t p = 0; p < procs; ++p)
    OTF2_Archive_CloseDefWriter(ar, OTF2_Archive_GetDefWriter(ar, p));
  must(OTF2_Archive_CloseDefFiles(ar), "close def files");
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, last + 1, OTF2_UNDEFINED_TIMESTAMP);
  const char* strings[] = {"",          "machine",  "node",          "main",           "compute",
                           "MPI_Send",  "MPI_Recv", "MPI_Allreduce", "MPI_COMM_WORLD", "MPI",
                           "locations", "world"};
  for (uint32_t s = 0; s < sizeof(strings) / sizeof(*strings); ++s)
    OTF2_GlobalDefWriter_WriteString(g, s, strings[s]);
  uint32_t next = sizeof(strings) / sizeof(*strings);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (uint32_t p = 0; p < procs; ++p) {
    std::string name = "rank " + std::to_string(p);
    OTF2_GlobalDefWriter_WriteString(g, next, name.c_str());
    OTF2_GlobalDefWriter_WriteLocationGroup(g, p, next, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, p, next, OTF2_LOCATION_TYPE_CPU_THREAD, counts[p], p);
    ++next;
  }
  OTF2_GlobalDefWriter_WriteRegion(g, kMain, 3, 3, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                   OTF2_REGION_FLAG_NONE, 0, 0, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, kCompute, 4, 4, 0, OTF2_REGION_ROLE_FUNCTION,
                                   OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 0, 0, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, kSend, 5, 5, 0, OTF2_REGION_ROLE_POINT2POINT,
                                   OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 9, 0, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, kRecv, 6, 6, 0, OTF2_REGION_ROLE_POINT2POINT,
                                   OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 9, 0, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, kAllreduce, 7, 7, 0, OTF2_REGION_ROLE_COLL_ALL2ALL,
                                   OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 9, 0, 0);
  std::vector<uint64_t> members(procs);
  for (uint32_t p = 0; p < procs; ++p)
    members[p] = p;
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 10, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, procs, members.data());
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 11, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, procs, members.data());
  OTF2_GlobalDefWriter_WriteComm(g, 0, 8, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  must(OTF2_Archive_Close(ar), "close archive");
  uint64_t sum = 0;
  for (uint64_t c : counts)
    sum += c;
  std::printf("%s: %llu events on %u processes\n", out.c_str(),
              static_cast<unsigned long long>(sum), procs);
  return 0;
}
