// Writes a synthetic MPI trace for the htrace-correct benchmark: P processes in a ring, each
// iteration a compute region, a send to the right neighbour, a receive from the left one, and an
// allreduce every 50 iterations (~8.1 events per iteration). Odd processes get a clock skewed by
// --skew ns so the trace holds violations to correct.
// Usage: gen_archive OUT_DIR [--processes P] [--events N (total)] [--skew NS] [--chunk BYTES]
//                            [--threads T]
// --threads: T locations per process (default 1), written as libhtrace's OMPT tool writes an
// OpenMP program's threads (libtrace/ompt/README.md): the compute region becomes a parallel region
// of all T threads (the master's ThreadFork ... ThreadJoin; on every member ThreadTeamBegin, the
// parallel region, its implicit barrier, ThreadTeamEnd), the MPI events stay on the master thread.
// Thread t of process p is location (t << 32) | p, as libhtrace numbers them.
// --chunk: the event chunk size (the definition chunk is 4 times it). OTF2's writer allocates and
// clears both for every location it writes: the default is 1 MiB up to 64 locations and OTF2's
// least, 256 KiB, above (2 M events over 2,048 processes: 129 s with 1 MiB, 46 s of it CPU; 3.9 s
// with 256 KiB, 1.6 s CPU). Locations are written one at a time, each writer closed before the
// next, so memory grows with locations by 16 bytes each only (the event counts, the OpenMP
// locations' group): 9.5 MB peak at 16,384 locations.
#include "format/otf2_library.h"

#include <algorithm>
#include <cerrno>
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

enum Region : uint32_t { kMain, kCompute, kSend, kRecv, kAllreduce, kParallel, kImplicitBarrier };

struct Shape {
  uint32_t procs = 4;
  uint32_t threads = 1;
  uint64_t iterations = 0;
  int64_t skew = 3000;
};

constexpr int64_t kBase = 1000000, kStep = 10000;

OTF2_LocationRef location_of(uint32_t process, uint32_t thread) {
  return (uint64_t{thread} << 32) | process;
}

/// The OpenMP team of process p: communicator 1 + p (0 is MPI_COMM_WORLD).
OTF2_CommRef team_of(uint32_t process) {
  return 1 + process;
}

/// Iteration i's start on process p, jittered by up to 996 ns.
int64_t iteration_start(uint32_t p, uint64_t i) {
  return kBase + static_cast<int64_t>(i) * kStep +
         static_cast<int64_t>((i * 7919 + uint64_t{p} * 104729) % 997);
}

/// Where a member's parallel region begins and it enters the implicit barrier, relative to the
/// iteration's start: thread-dependent, so the barrier's last arrival varies.
int64_t member_begin(uint32_t thread) {
  return thread == 0 ? 10 : 20 + (thread * 37) % 500;
}
int64_t barrier_enter(uint32_t p, uint64_t i, uint32_t thread) {
  return 4000 + static_cast<int64_t>((i * 31 + uint64_t{p} * 17 + uint64_t{thread} * 7907) % 500);
}
// Every member leaves the barrier, the region and the team together (libhtrace stamps the workers'
// ends at the master's end of the implicit barrier), the master joins after that.
constexpr int64_t kBarrierLeave = 4600, kJoin = 4700, kComputeEnd = 5000;

/// The parallel region's records of one member (the master's fork and join around them).
void write_parallel(OTF2_EvtWriter* w, const Shape& s, uint32_t p, uint32_t thread, uint64_t i,
                    int64_t off) {
  auto ts = [&](int64_t t) { return static_cast<OTF2_TimeStamp>(t + off); };
  const int64_t t = iteration_start(p, i), t0 = kBase + static_cast<int64_t>(i) * kStep;
  if (thread == 0) OTF2_EvtWriter_ThreadFork(w, nullptr, ts(t), OTF2_PARADIGM_OPENMP, s.threads);
  OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, ts(t + member_begin(thread)), team_of(p));
  OTF2_EvtWriter_Enter(w, nullptr, ts(t + member_begin(thread)), kParallel);
  OTF2_EvtWriter_Enter(w, nullptr, ts(t0 + barrier_enter(p, i, thread)), kImplicitBarrier);
  OTF2_EvtWriter_Leave(w, nullptr, ts(t0 + kBarrierLeave), kImplicitBarrier);
  OTF2_EvtWriter_Leave(w, nullptr, ts(t0 + kBarrierLeave), kParallel);
  OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, ts(t0 + kBarrierLeave), team_of(p));
  if (thread == 0) OTF2_EvtWriter_ThreadJoin(w, nullptr, ts(t0 + kJoin), OTF2_PARADIGM_OPENMP);
}

/// One location's events; returns the time of its last one (without the skew).
int64_t write_location(OTF2_EvtWriter* w, const Shape& s, uint32_t p, uint32_t thread) {
  const int64_t off = (p % 2) ? -s.skew : 0;
  auto ts = [&](int64_t t) { return static_cast<OTF2_TimeStamp>(t + off); };
  const uint32_t right = (p + 1) % s.procs, left = (p + s.procs - 1) % s.procs;
  // Processes enter the allreduce in rank order, 10 ns apart up to 100 processes and within 1 us
  // for any P, so that each enters (+8000 + arrival) and begins (10 ns later) before it ends
  // (+9500).
  const int64_t arrival = static_cast<int64_t>(p) * 1000 / std::max<int64_t>(s.procs, 100);
  const int64_t end = kBase + static_cast<int64_t>(s.iterations) * kStep + 1000;
  if (thread > 0) {
    for (uint64_t i = 0; i < s.iterations; ++i)
      write_parallel(w, s, p, thread, i, off);
    return end - 1000;
  }
  must(OTF2_EvtWriter_Enter(w, nullptr, ts(kBase - 500), kMain), "write");
  for (uint64_t i = 0; i < s.iterations; ++i) {
    const int64_t t0 = kBase + static_cast<int64_t>(i) * kStep;
    if (s.threads > 1) {
      write_parallel(w, s, p, 0, i, off);
    } else {
      OTF2_EvtWriter_Enter(w, nullptr, ts(iteration_start(p, i)), kCompute);
      OTF2_EvtWriter_Leave(w, nullptr, ts(t0 + kComputeEnd), kCompute);
    }
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
  must(OTF2_EvtWriter_Leave(w, nullptr, ts(end), kMain), "write");
  return end;
}

bool parse_count(const char* text, uint64_t least, uint64_t most, uint64_t& out) {
  char* rest = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &rest, 10);
  if (errno || rest == text || *rest || text[0] == '-' || v < least || v > most) return false;
  out = v;
  return true;
}

const char kUsage[] = "usage: gen_archive OUT_DIR [--processes P] [--events N] [--skew NS] "
                      "[--chunk BYTES] [--threads T]\n";

} // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc % 2 != 0) return std::fputs(kUsage, stderr), 2;
  std::string out = argv[1];
  Shape s;
  uint64_t total = 10000000;
  uint64_t chunk = 0; // the default: from the number of locations
  for (int i = 2; i + 1 < argc; i += 2) {
    uint64_t v = 0;
    bool ok = true;
    if (!std::strcmp(argv[i], "--processes"))
      ok = parse_count(argv[i + 1], 1, UINT32_MAX, v), s.procs = static_cast<uint32_t>(v);
    else if (!std::strcmp(argv[i], "--threads"))
      ok = parse_count(argv[i + 1], 1, UINT32_MAX, v), s.threads = static_cast<uint32_t>(v);
    else if (!std::strcmp(argv[i], "--events"))
      ok = parse_count(argv[i + 1], 0, UINT64_MAX / 100, total);
    else if (!std::strcmp(argv[i], "--skew"))
      s.skew = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--chunk"))
      ok = parse_count(argv[i + 1], 1, UINT32_MAX, chunk);
    else
      ok = false;
    if (!ok) {
      std::fprintf(stderr, "gen_archive: error: bad option '%s %s'\n%s", argv[i], argv[i + 1],
                   kUsage);
      return 2;
    }
  }
  // Records per 50 iterations of one process: 404 without threads (8.08 per iteration); with
  // threads the master's 14.08 (fork, team begin/end, parallel region, barrier, join, MPI) and 6
  // per other thread.
  const uint64_t per50 = s.threads == 1 ? 404 : 704 + 300 * uint64_t{s.threads - 1};
  s.iterations = total / s.procs * 50 / per50;
  if (chunk == 0) chunk = uint64_t{s.procs} * s.threads <= 64 ? 1024 * 1024 : 256 * 1024;
  OTF2_Archive* ar = OTF2_Archive_Open(out.c_str(), "traces", OTF2_FILEMODE_WRITE, chunk, 4 * chunk,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar) return std::fprintf(stderr, "gen_archive: error: '%s': cannot create\n", out.c_str()), 1;
  OTF2_Archive_SetFlushCallbacks(ar, &htrace::format::kFlushAlways, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  must(OTF2_Archive_OpenEvtFiles(ar), "open event files");
  int64_t last = 0;
  // Event counts, process-major: [p * threads + t].
  std::vector<uint64_t> counts(uint64_t{s.procs} * s.threads);
  for (uint32_t p = 0; p < s.procs; ++p) {
    for (uint32_t t = 0; t < s.threads; ++t) {
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar, location_of(p, t));
      if (!w) must(OTF2_ERROR_MEM_ALLOC_FAILED, "get event writer");
      last = std::max(last, write_location(w, s, p, t));
      must(OTF2_EvtWriter_GetNumberOfEvents(w, &counts[uint64_t{p} * s.threads + t]), "count");
      must(OTF2_Archive_CloseEvtWriter(ar, w), "close event writer");
    }
  }
  must(OTF2_Archive_CloseEvtFiles(ar), "close event files");
  must(OTF2_Archive_OpenDefFiles(ar), "open def files");
  for (uint32_t p = 0; p < s.procs; ++p)
    for (uint32_t t = 0; t < s.threads; ++t)
      must(OTF2_Archive_CloseDefWriter(ar, OTF2_Archive_GetDefWriter(ar, location_of(p, t))),
           "close def writer");
  must(OTF2_Archive_CloseDefFiles(ar), "close def files");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
  must(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, static_cast<uint64_t>(last) + 1,
                                                 OTF2_UNDEFINED_TIMESTAMP),
       "write clock properties");
  enum String : uint32_t {
    kEmpty,
    kMachine,
    kNode,
    kMainName,
    kComputeName,
    kSendName,
    kRecvName,
    kAllreduceName,
    kWorldName,
    kMpiFile,
    kLocationsName,
    kWorldGroupName,
    kParallelName,
    kBarrierName,
    kOpenMpFile,
    kOpenMpLocationsName,
    kTeamName,
    kMasterThreadName,
    kFirstFree
  };
  const char* strings[] = {"",
                           "machine",
                           "node",
                           "main",
                           "compute",
                           "MPI_Send",
                           "MPI_Recv",
                           "MPI_Allreduce",
                           "MPI_COMM_WORLD",
                           "MPI",
                           "locations",
                           "world",
                           "!$omp parallel @gen_archive+0x10",
                           "!$omp implicit barrier @gen_archive+0x10",
                           "OpenMP",
                           "OpenMP locations",
                           "OpenMP team",
                           "Master thread"};
  for (uint32_t i = 0; i < kFirstFree; ++i)
    must(OTF2_GlobalDefWriter_WriteString(g, i, strings[i]), "write string");
  // "Thread t" for t >= 1, then "rank p".
  const uint32_t thread_names = kFirstFree - 1, rank_names = kFirstFree + s.threads - 1;
  for (uint32_t t = 1; t < s.threads; ++t)
    must(OTF2_GlobalDefWriter_WriteString(g, thread_names + t,
                                          ("Thread " + std::to_string(t)).c_str()),
         "write string");
  must(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, kMachine, kNode,
                                                OTF2_UNDEFINED_SYSTEM_TREE_NODE),
       "write system tree");
  for (uint32_t p = 0; p < s.procs; ++p) {
    const std::string name = "rank " + std::to_string(p);
    must(OTF2_GlobalDefWriter_WriteString(g, rank_names + p, name.c_str()), "write string");
    must(OTF2_GlobalDefWriter_WriteLocationGroup(g, p, rank_names + p,
                                                 OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                 OTF2_UNDEFINED_LOCATION_GROUP),
         "write location group");
  }
  // Locations in libhtrace's order: process by process, each's master thread first.
  for (uint32_t p = 0; p < s.procs; ++p)
    for (uint32_t t = 0; t < s.threads; ++t)
      must(OTF2_GlobalDefWriter_WriteLocation(g, location_of(p, t), thread_names + t,
                                              OTF2_LOCATION_TYPE_CPU_THREAD,
                                              counts[uint64_t{p} * s.threads + t], p),
           "write location");
  auto region = [&](Region r, uint32_t name, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                    uint32_t file) {
    must(OTF2_GlobalDefWriter_WriteRegion(g, r, name, name, kEmpty, role, paradigm,
                                          OTF2_REGION_FLAG_NONE, file, 0, 0),
         "write region");
  };
  region(kMain, kMainName, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, kEmpty);
  region(kCompute, kComputeName, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, kEmpty);
  region(kSend, kSendName, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, kMpiFile);
  region(kRecv, kRecvName, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI, kMpiFile);
  region(kAllreduce, kAllreduceName, OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI, kMpiFile);
  if (s.threads > 1) {
    region(kParallel, kParallelName, OTF2_REGION_ROLE_PARALLEL, OTF2_PARADIGM_OPENMP, kOpenMpFile);
    region(kImplicitBarrier, kBarrierName, OTF2_REGION_ROLE_IMPLICIT_BARRIER, OTF2_PARADIGM_OPENMP,
           kOpenMpFile);
  }
  // Groups: 0 the MPI locations (world rank p = location p), 1 MPI_COMM_WORLD's ranks; with
  // threads 2 every thread location in id order (all masters, then each process's thread 1, ...)
  // and 3 + p process p's team, as positions in group 2 (thread t of p is at t * P + p).
  std::vector<uint64_t> members(s.procs);
  for (uint32_t p = 0; p < s.procs; ++p)
    members[p] = p;
  must(OTF2_GlobalDefWriter_WriteGroup(g, 0, kLocationsName, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                       OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, s.procs,
                                       members.data()),
       "write group");
  must(OTF2_GlobalDefWriter_WriteGroup(g, 1, kWorldGroupName, OTF2_GROUP_TYPE_COMM_GROUP,
                                       OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, s.procs,
                                       members.data()),
       "write group");
  must(
      OTF2_GlobalDefWriter_WriteComm(g, 0, kWorldName, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
      "write comm");
  if (s.threads > 1) {
    members.resize(uint64_t{s.procs} * s.threads);
    for (uint32_t t = 0; t < s.threads; ++t)
      for (uint32_t p = 0; p < s.procs; ++p)
        members[uint64_t{t} * s.procs + p] = location_of(p, t);
    must(OTF2_GlobalDefWriter_WriteGroup(g, 2, kOpenMpLocationsName, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                         OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, members.size(),
                                         members.data()),
         "write group");
    std::vector<uint64_t> team(s.threads);
    for (uint32_t p = 0; p < s.procs; ++p) {
      for (uint32_t t = 0; t < s.threads; ++t)
        team[t] = uint64_t{t} * s.procs + p;
      must(OTF2_GlobalDefWriter_WriteGroup(g, 3 + p, kEmpty, OTF2_GROUP_TYPE_COMM_GROUP,
                                           OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, s.threads,
                                           team.data()),
           "write group");
      must(OTF2_GlobalDefWriter_WriteComm(g, team_of(p), kTeamName, 3 + p, OTF2_UNDEFINED_COMM,
                                          OTF2_COMM_FLAG_NONE),
           "write comm");
    }
  }
  must(OTF2_Archive_Close(ar), "close archive");
  uint64_t sum = 0;
  for (uint64_t c : counts)
    sum += c;
  std::printf("%s: %llu events on %u processes x %u threads\n", out.c_str(),
              static_cast<unsigned long long>(sum), s.procs, s.threads);
  return 0;
}
