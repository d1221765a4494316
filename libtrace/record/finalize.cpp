// End of recording: the collective finalize (write, unify, close) and the local-only emergency
// flush. Both run once; whichever comes first wins.
#include "common/host_name.h"
#include "common/log.h"
#include "common/traffic.h"
#include "htrace/archive_properties.h"
#include "record/archive.h"
#include "record/global_defs.h"
#include "record/location_writer.h"
#include "record/snapshot.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <otf2/otf2.h>
#include <sys/stat.h>
#include <thread>
#include <time.h>

namespace htrace::record {
namespace {

/// Writes every location's buffer (after HTRACE_BUDGET stopped recording: and the
/// MeasurementOnOff that ends it) and closes its event writer. Caller holds s.mutex.
void write_all_locations(State& s) {
  const bool budget_reached = s.budget.reached();
  for (auto& loc : s.locations) {
    std::lock_guard<std::mutex> lock(LocationAccess::write_mutex(*loc));
    LocationAccess::write_out(*loc, s, LocationAccess::FlushMark::None);
    if (budget_reached) LocationAccess::end_at_budget(*loc, s);
    LocationAccess::close_writer(*loc, s);
  }
}

RankDefs collect_definitions(State& s) {
  RankDefs d;
  d.rank = s.rank;
  d.host = host_name();
  for (auto& loc : s.locations) {
    std::lock_guard<std::mutex> lock(LocationAccess::write_mutex(*loc));
    const auto st = LocationAccess::stats(*loc);
    d.locations.push_back({loc->id(), st.events_written, st.min_global, st.max_global});
  }
  d.regions = s.regions;
  d.comms = s.comms;
  d.process_properties = s.process_properties;
  return d;
}

/// Logs a failed step, unless an earlier failure (e.g. a full disk) already explained it.
bool g_finalize_error = false; ///< a step failed: the archive may be unreadable, keep salvage files

void report(const std::string& step, const std::string& error) {
  if (!error.empty()) g_finalize_error = true;
  if (!error.empty() && !state().failed.load()) log::error("%s: %s", step.c_str(), error.c_str());
}

/// This rank's messages and collectives in MPI_Finalize (the debug log; bench/scale counts them).
/// OTF2's own collective calls (opening and closing files) are not in it.
TrafficCount g_traffic;

// ---- the merge tree: binomial over ranks, log2(p) rounds up and as many down ----
constexpr int kTagSet = 0x4855; // a subtree's merged definitions, child -> parent
constexpr int kTagMap = 0x4856; // the subtree's translation to global ids, parent -> child

/// The length first (a small message the receiver waits for politely), then the bytes.
void send_bytes(const std::string& bytes, int to, int tag, MPI_Comm comm) {
  int length = static_cast<int>(bytes.size());
  PMPI_Send(&length, 1, MPI_INT, to, tag, comm);
  PMPI_Send(bytes.data(), length, MPI_BYTE, to, tag, comm);
  g_traffic.sent(nullptr, to, sizeof length);
  g_traffic.sent(nullptr, to, bytes.size());
}

/// Where ranks outnumber cores, a waiting rank must not take the core from the ranks still
/// working (rank 0 writing the global definitions, a parent merging): waits sleep between polls,
/// longer when oversubscribed. Open MPI and MPICH tell the ranks per node in the environment.
bool oversubscribed() {
  static const bool value = [] {
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!local) local = std::getenv("MPI_LOCALNRANKS");
    const unsigned cores = std::thread::hardware_concurrency();
    return local && cores && std::strtoul(local, nullptr, 10) > cores;
  }();
  return value;
}

/// Completes `request`: polls, sleeping 5 us, 10 us, ... up to 1 ms (oversubscribed) or 50 us.
void wait_politely(MPI_Request& request, MPI_Status* status = MPI_STATUS_IGNORE) {
  const std::chrono::microseconds cap(oversubscribed() ? 1000 : 50);
  std::chrono::microseconds nap(5);
  for (int done = 0;;) {
    PMPI_Test(&request, &done, status);
    if (done) return;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, cap);
  }
}

/// A barrier whose waiting ranks sleep (see wait_politely): placed before OTF2's collective calls,
/// whose MPI waits spin, so that those start when every rank is there.
void polite_barrier(MPI_Comm comm) {
  MPI_Request request;
  PMPI_Ibarrier(comm, &request);
  wait_politely(request);
  g_traffic.collective();
}

/// Receives a message of any length, waiting politely.
std::string recv_bytes(int from, int tag, MPI_Comm comm) {
  int length = 0;
  MPI_Request request;
  PMPI_Irecv(&length, 1, MPI_INT, from, tag, comm, &request);
  wait_politely(request);
  std::string bytes(static_cast<std::size_t>(length), '\0');
  PMPI_Recv(bytes.data(), length, MPI_BYTE, from, tag, comm, MPI_STATUS_IGNORE);
  g_traffic.received(nullptr, from, sizeof length);
  g_traffic.received(nullptr, from, bytes.size());
  return bytes;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

struct TreeResult {
  IdMaps maps;        ///< this rank's local ids -> global ids
  DefSet complete;    ///< rank 0: everybody's definitions, unified
  std::string rounds; ///< per round "wait+merge ms (bytes)", for the debug log (bench/initfinal)
  double down_ms = 0;
};

/// Merges the definitions up a binomial tree (in the round of `step`, rank r + step sends its
/// subtree's set to r, which merges it after its own), then sends each child its subtree's
/// translation to global ids. Ranks merge in rank order, so the ids are those of a flat pass.
TreeResult unify_over_tree(const RankDefs& mine, MPI_Comm comm, int rank, int size) {
  LeafIds ids;
  TreeResult out;
  DefSet set = leaf_set(mine, ids);
  std::vector<std::pair<int, SetMap>> children;
  int parent = -1;
  for (int step = 1; step < size; step *= 2) {
    if (rank % (2 * step) == step) {
      parent = rank - step;
      send_bytes(serialize(set), parent, kTagSet, comm);
      set = DefSet{};
      break;
    }
    if (rank + step >= size) continue;
    auto began = std::chrono::steady_clock::now();
    const std::string bytes = recv_bytes(rank + step, kTagSet, comm);
    const double wait_ms = ms_since(began);
    began = std::chrono::steady_clock::now();
    DefSet child;
    if (!deserialize(bytes, child)) {
      report("definitions of ranks from " + std::to_string(rank + step), "corrupt");
      child = DefSet{};
    }
    children.emplace_back(rank + step, merge(set, std::move(child)));
    char line[96];
    std::snprintf(line, sizeof line, " %.2f+%.2f(%zu)", wait_ms, ms_since(began), bytes.size());
    out.rounds += line;
  }
  const auto down = std::chrono::steady_clock::now();
  SetMap to_global;
  if (parent < 0) {
    to_global = global_ids(set);
    out.complete = std::move(set);
  } else if (!deserialize(recv_bytes(parent, kTagMap, comm), to_global)) {
    report("id mapping", "corrupt mapping tables received");
  }
  // The child merged last roots the largest subtree: it goes first.
  for (auto it = children.rbegin(); it != children.rend(); ++it)
    send_bytes(serialize(compose(to_global, it->second)), it->first, kTagMap, comm);
  out.maps = local_maps(ids, to_global);
  out.down_ms = ms_since(down);
  return out;
}

ClockInfo clock_info(State& s, const std::vector<RankDefs>& all) {
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& d : all)
    for (const auto& loc : d.locations) {
      lo = std::min(lo, loc.min_global);
      hi = std::max(hi, loc.max_global);
    }
  if (lo > hi) lo = hi = s.current_map().to_global(s.start_base_ns); // no events at all
  ClockInfo info;
  info.global_offset = static_cast<std::uint64_t>(std::max<std::int64_t>(lo, 0));
  info.trace_length =
      static_cast<std::uint64_t>(hi - static_cast<std::int64_t>(info.global_offset));
  // Rank 0's (realtime, base) pair taken in start(), moved to the global offset.
  const std::int64_t start_global = s.current_map().to_global(s.start_base_ns);
  info.realtime_at_offset = static_cast<std::uint64_t>(
      s.start_realtime_ns + (static_cast<std::int64_t>(info.global_offset) - start_global));
  return info;
}

std::vector<void (*)()>& finalize_hooks() {
  static auto* hooks = new std::vector<void (*)()>;
  return *hooks;
}

} // namespace

void add_finalize_hook(void (*hook)()) {
  std::lock_guard<std::mutex> lock(state().mutex);
  finalize_hooks().push_back(hook);
}

void finalize() {
  State& s = state();
  // Collective: every rank whose start() succeeded runs all steps, even after a local write
  // failure, so that no rank waits forever for another.
  if (!s.finalize_pending.load()) return;
  // Hooks (the OMPT tool ending constructs libomp left open) add their events before the writing.
  if (s.phase.load() == Phase::Recording)
    for (auto hook : finalize_hooks())
      hook();
  if (!s.finalize_pending.exchange(false)) return;
  s.phase = Phase::Stopped;
  detail::g_thread_lookup_ok = false;
  auto* archive = reinterpret_cast<OTF2_Archive*>(s.archive);

  // Phase times for the debug log (bench/initfinal models large runs from them).
  const auto t_start = std::chrono::steady_clock::now();
  RankDefs mine;
  RmaIoDefs rma_io_mine;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    snapshot::refresh_locked(s); // in case writing fails below
    write_all_locations(s);
    mine = collect_definitions(s);
    rma_io_mine = s.rma_io;
  }
  // A rank whose writing failed cannot take part in OTF2's collective close; every rank learns
  // it and the archive is abandoned (event files of healthy ranks stay on disk).
  // The same reduction counts the ranks HTRACE_BUDGET stopped (an archive property).
  int here[2] = {s.failed.load() ? 1 : 0, s.budget.reached() ? 1 : 0}, ranks[2] = {0, 0};
  MPI_Request agree;
  PMPI_Iallreduce(here, ranks, 2, MPI_INT, MPI_SUM, s.comm, &agree);
  wait_politely(agree); // ranks finish writing their buffers at different times
  g_traffic.collective();
  const int failed_ranks = ranks[0], ranks_over_budget = ranks[1];
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.totals.global_ranks_over_budget = static_cast<std::uint64_t>(ranks_over_budget);
  }
  if (ranks_over_budget > 0 && s.rank == 0)
    set_archive_property(HTRACE_PROP_RUN_BUDGET_RANKS, std::to_string(ranks_over_budget));
  if (failed_ranks > 0) {
    snapshot::mark_end(snapshot::kFinished); // a rank whose writing failed keeps that cause
    // What the files hold is known, what of it is whole only to htrace-salvage: say both sizes.
    std::uint64_t bytes = 0;
    for (const auto& loc : mine.locations) {
      struct stat st;
      if (::stat(event_file_path(s, loc.id).c_str(), &st) == 0)
        bytes += static_cast<std::uint64_t>(st.st_size);
    }
    std::uint64_t in[2] = {summary().events_recorded, bytes}, sum[2] = {0, 0};
    PMPI_Reduce(in, sum, 2, MPI_UINT64_T, MPI_SUM, 0, s.comm);
    // The one summary of the run (no "trace written" line follows).
    if (s.rank == 0)
      log::error("the archive '%s' is incomplete (writing failed on %d rank(s)): its event files "
                 "hold %llu bytes of the %llu events recorded; 'htrace-salvage %s OUT' makes a "
                 "readable archive of them",
                 s.archive_path.c_str(), failed_ranks, static_cast<unsigned long long>(sum[1]),
                 static_cast<unsigned long long>(sum[0]), s.archive_path.c_str());
    s.archive_ready = false;
    s.archive = nullptr; // abandoned, see above
    return;
  }
  // From here on every rank runs the same sequence of collectives, errors or not.
  const double flush_ms = ms_since(t_start);
  const auto t_evt = std::chrono::steady_clock::now();
  OTF2_ErrorCode rc = OTF2_Archive_CloseEvtFiles(archive);
  if (rc != OTF2_SUCCESS) report("closing event files", OTF2_Error_GetDescription(rc));

  const double evt_ms = ms_since(t_evt);
  const auto t_tree = std::chrono::steady_clock::now();
  TreeResult tree = unify_over_tree(mine, s.comm, s.rank, s.size);
  Unified unified;
  if (s.rank == 0) unified = global_definitions(tree.complete);
  // Windows and MPI-IO handles are identified by their (now global) communicators.
  RmaIoMaps rma_io_maps;
  RmaIoGlobal rma_io_global;
  polite_barrier(s.comm); // the exchange's collectives spin while they wait
  g_traffic.collective(); // the exchange's agreement (more where windows or files exist)
  report("window and file definitions",
         exchange_rma_io(rma_io_mine, tree.maps.comms,
                         static_cast<std::uint32_t>(unified.groups.size()), s.comm, s.rank, s.size,
                         rma_io_maps, rma_io_global));

  const double tree_ms = ms_since(t_tree);
  const auto t_local = std::chrono::steady_clock::now();
  polite_barrier(s.comm); // ranks whose maps came early would spin in OTF2's collective
  rc = OTF2_Archive_OpenDefFiles(archive);
  if (rc == OTF2_SUCCESS)
    report("local definitions", write_local_definitions(s.archive, mine, tree.maps, &rma_io_maps));
  polite_barrier(s.comm);
  rc = OTF2_Archive_CloseDefFiles(archive);
  if (rc != OTF2_SUCCESS) report("closing definition files", OTF2_Error_GetDescription(rc));

  const double local_ms = ms_since(t_local);
  const auto t_global = std::chrono::steady_clock::now();
  if (s.rank == 0) {
    const std::vector<RankDefs>& all = tree.complete.ranks;
    report("global definitions",
           write_global_definitions(s.archive, all, unified, clock_info(s, all), &rma_io_global));
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto& p : s.archive_properties) {
      rc = OTF2_Archive_SetProperty(archive, p.first.c_str(), p.second.c_str(), true);
      if (rc != OTF2_SUCCESS) report("archive property " + p.first, OTF2_Error_GetDescription(rc));
    }
  }
  polite_barrier(s.comm); // the others sleep while rank 0 writes the global definitions
  const double global_ms = ms_since(t_global);
  const auto t_close = std::chrono::steady_clock::now();
  report("closing the archive", close_archive(s));
  if (s.rank == 0)
    log::debug("finalize: writing and agreeing %.2f ms, closing event files %.2f ms, definition "
               "tree %.2f ms over %d ranks (rank 0's rounds, wait+merge ms (bytes):%s), maps "
               "down %.2f ms, local definitions %.2f ms, global definitions %.2f ms, closing the "
               "archive %.2f ms",
               flush_ms, evt_ms, tree_ms, s.size, tree.rounds.c_str(), tree.down_ms, local_ms,
               global_ms, ms_since(t_close));

  // Totals for the run summary (bytes per event).
  Summary local = summary();
  std::uint64_t bytes = 0;
  for (const auto& loc : mine.locations) {
    struct stat st;
    if (::stat(event_file_path(s, loc.id).c_str(), &st) == 0)
      bytes += static_cast<std::uint64_t>(st.st_size);
  }
  std::uint64_t in[4] = {local.events_written, bytes, local.events_dropped,
                         local.timestamps_clamped};
  std::uint64_t out[4] = {0, 0, 0, 0};
  std::int64_t largest_clamp = 0;
  if (!g_finalize_error) snapshot::remove_files(s); // a complete archive: nothing to salvage
  PMPI_Reduce(in, out, 4, MPI_UINT64_T, MPI_SUM, 0, s.comm);
  PMPI_Reduce(&local.largest_clamp_ns, &largest_clamp, 1, MPI_INT64_T, MPI_MAX, 0, s.comm);
  g_traffic.collective();
  g_traffic.collective();
  log::debug("finalize: traffic of this rank: %s", g_traffic.summary().c_str());
  if (s.rank == 0) snapshot::remove_directory(s); // every rank removed its files before
  std::lock_guard<std::mutex> lock(s.mutex);
  s.totals.archive_complete = !g_finalize_error;
  s.totals.bytes_written = bytes;
  s.totals.global_events_written = out[0];
  s.totals.global_bytes_written = out[1];
  s.totals.global_events_dropped = out[2];
  s.totals.global_timestamps_clamped = out[3];
  s.totals.global_largest_clamp_ns = largest_clamp;
  if (local.events_dropped)
    log::rank_warning("%llu events of this process were dropped (see earlier messages)",
                      static_cast<unsigned long long>(local.events_dropped));
}

namespace {

/// try_lock, retried for up to 200 ms when `may_wait`: another thread converting its buffer (well
/// under a millisecond normally) lets go within that. Never blocks for good: the holder may be this
/// very thread, interrupted by the signal. nanosleep is async-signal-safe.
bool lock_soon(std::mutex& m, bool may_wait) {
  constexpr int kWaitMs = 200;
  for (int waited_ms = 0;; ++waited_ms) {
    if (m.try_lock()) return true;
    if (!may_wait || waited_ms >= kWaitMs) return false;
    struct timespec one_ms = {0, 1000000};
    ::nanosleep(&one_ms, nullptr);
  }
}

} // namespace

void emergency_flush(const char* reason) {
  State& s = state();
  if (!s.finalize_pending.exchange(false)) return;
  s.phase = Phase::Stopped;
  detail::g_thread_lookup_ok = false;
  snapshot::mark_end(reason);
  // Never block for good: a thread interrupted by a signal may hold any of these locks. A thread
  // interrupted inside its own conversion holds the registry or its location: no wait there.
  const LocationImpl* const interrupted = LocationAccess::own_flush();
  if (!lock_soon(s.mutex, interrupted == nullptr)) {
    log::error("%s: trace not written (recorder busy)", reason);
    return;
  }
  std::unique_lock<std::mutex> lock(s.mutex, std::adopt_lock);
  snapshot::refresh_locked(s);
  std::uint64_t written = 0, skipped = 0;
  for (auto& loc : s.locations) {
    std::mutex& m = LocationAccess::write_mutex(*loc);
    if (!lock_soon(m, interrupted != loc.get())) {
      ++skipped;
      continue;
    }
    std::unique_lock<std::mutex> wl(m, std::adopt_lock);
    LocationAccess::write_out(*loc, s, LocationAccess::FlushMark::None);
    if (s.budget.reached()) LocationAccess::end_at_budget(*loc, s);
    LocationAccess::close_writer(*loc, s);
    written += LocationAccess::stats(*loc).events_written;
  }
  const char* deferred = s.deferred_signal_event_lost.load()
                             ? " (the signal waited until a thread had written out its full "
                               "buffer; the one event it was recording then is missing)"
                             : "";
  log::error("%s: wrote %llu events of this process to '%s'%s%s; the archive lacks its global "
             "definitions (no collective finalize): 'htrace-salvage %s OUT' makes it readable",
             reason, static_cast<unsigned long long>(written), s.archive_path.c_str(),
             skipped ? " (some threads were busy and are missing)" : "", deferred,
             s.archive_path.c_str());
}

Summary summary() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  Summary out = s.totals;
  out.archive_path = s.archive_path;
  out.events_dropped = s.dropped_elsewhere.load();
  for (auto& loc : s.locations) {
    std::lock_guard<std::mutex> wl(LocationAccess::write_mutex(*loc));
    const auto st = LocationAccess::stats(*loc);
    out.events_recorded += st.events_recorded + LocationAccess::buffered(*loc);
    out.events_written += st.events_written;
    out.events_dropped += st.events_dropped;
    out.timestamps_clamped += st.clamped;
    out.largest_clamp_ns = std::max(out.largest_clamp_ns, st.largest_clamp);
    out.buffer_flushes += st.flushes;
  }
  return out;
}

} // namespace htrace::record
