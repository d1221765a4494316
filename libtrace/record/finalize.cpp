// End of recording: the collective finalize (write, unify, close) and the local-only emergency
// flush. Both run once; whichever comes first wins.
#include "common/host_name.h"
#include "common/log.h"
#include "record/archive.h"
#include "record/global_defs.h"
#include "record/location_writer.h"

#include <algorithm>
#include <otf2/otf2.h>
#include <sys/stat.h>

namespace htrace::record {
namespace {

std::string evt_file(const State& s, LocationId id) {
  return s.archive_path + "/traces/" + std::to_string(id) + ".evt";
}

/// Writes every location's buffer and closes its event writer. Caller holds s.mutex.
void write_all_locations(State& s) {
  for (auto& loc : s.locations) {
    std::lock_guard<std::mutex> lock(LocationAccess::write_mutex(*loc));
    LocationAccess::write_out(*loc, s, /*mark_flush=*/false);
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

/// Gathers every rank's bytes on rank 0 (result empty elsewhere).
std::vector<std::string> gather(const std::string& mine, MPI_Comm comm, int rank, int size) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    long total = 0;
    for (int r = 0; r < size; ++r)
      displs[r] = static_cast<int>(total), total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR,
               0, comm);
  std::vector<std::string> parts;
  for (int r = 0; rank == 0 && r < size; ++r)
    parts.push_back(all.substr(displs[r], lengths[r]));
  return parts;
}

/// Rank 0 sends parts[r] to rank r.
std::string scatter(const std::vector<std::string>& parts, MPI_Comm comm, int rank, int size) {
  std::vector<int> lengths, displs;
  std::string all;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      lengths.push_back(static_cast<int>(parts[r].size()));
      displs.push_back(static_cast<int>(all.size()));
      all += parts[r];
    }
  }
  int length = 0;
  PMPI_Scatter(lengths.data(), 1, MPI_INT, &length, 1, MPI_INT, 0, comm);
  std::string mine(static_cast<std::size_t>(length), '\0');
  PMPI_Scatterv(all.data(), lengths.data(), displs.data(), MPI_CHAR, mine.data(), length, MPI_CHAR,
                0, comm);
  return mine;
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

/// Logs a failed step, unless an earlier failure (e.g. a full disk) already explained it.
void report(const std::string& step, const std::string& error) {
  if (!error.empty() && !state().failed.load()) log::error("%s: %s", step.c_str(), error.c_str());
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
  s.thread_lookup_ok = false;
  auto* archive = reinterpret_cast<OTF2_Archive*>(s.archive);

  RankDefs mine;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    write_all_locations(s);
    mine = collect_definitions(s);
  }
  // A rank whose writing failed cannot take part in OTF2's collective close; every rank learns
  // it and the archive is abandoned (event files of healthy ranks stay on disk).
  int failed_here = s.failed.load() ? 1 : 0, failed_ranks = 0;
  PMPI_Allreduce(&failed_here, &failed_ranks, 1, MPI_INT, MPI_SUM, s.comm);
  if (failed_ranks > 0) {
    if (s.rank == 0)
      log::error("the archive '%s' is incomplete (writing failed on %d rank(s)) and cannot be read",
                 s.archive_path.c_str(), failed_ranks);
    s.archive_ready = false;
    s.archive = nullptr; // abandoned, see above
    return;
  }
  // From here on every rank runs the same sequence of collectives, errors or not.
  OTF2_ErrorCode rc = OTF2_Archive_CloseEvtFiles(archive);
  if (rc != OTF2_SUCCESS) report("closing event files", OTF2_Error_GetDescription(rc));

  const std::vector<std::string> parts = gather(serialize(mine), s.comm, s.rank, s.size);
  std::vector<RankDefs> all;
  Unified unified;
  std::vector<std::string> map_parts;
  if (s.rank == 0) {
    all.resize(parts.size());
    for (std::size_t r = 0; r < parts.size(); ++r)
      if (!deserialize(parts[r], all[r]))
        report("definitions of rank " + std::to_string(r), "corrupt");
    unified = unify(all);
    for (const auto& m : unified.maps)
      map_parts.push_back(serialize(m));
  }
  IdMaps maps;
  if (!deserialize(scatter(map_parts, s.comm, s.rank, s.size), maps))
    report("id mapping", "corrupt mapping tables received");

  rc = OTF2_Archive_OpenDefFiles(archive);
  if (rc == OTF2_SUCCESS)
    report("local definitions", write_local_definitions(s.archive, mine, maps));
  rc = OTF2_Archive_CloseDefFiles(archive);
  if (rc != OTF2_SUCCESS) report("closing definition files", OTF2_Error_GetDescription(rc));

  if (s.rank == 0) {
    report("global definitions",
           write_global_definitions(s.archive, all, unified, clock_info(s, all)));
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto& p : s.archive_properties) {
      rc = OTF2_Archive_SetProperty(archive, p.first.c_str(), p.second.c_str(), true);
      if (rc != OTF2_SUCCESS) report("archive property " + p.first, OTF2_Error_GetDescription(rc));
    }
  }
  report("closing the archive", close_archive(s));

  // Totals for the run summary (bytes per event).
  Summary local = summary();
  std::uint64_t bytes = 0;
  for (const auto& loc : mine.locations) {
    struct stat st;
    if (::stat(evt_file(s, loc.id).c_str(), &st) == 0)
      bytes += static_cast<std::uint64_t>(st.st_size);
  }
  std::uint64_t in[3] = {local.events_written, bytes, local.events_dropped}, out[3] = {0, 0, 0};
  PMPI_Reduce(in, out, 3, MPI_UINT64_T, MPI_SUM, 0, s.comm);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.totals.bytes_written = bytes;
  s.totals.global_events_written = out[0];
  s.totals.global_bytes_written = out[1];
  s.totals.global_events_dropped = out[2];
  if (local.events_dropped)
    log::warning("%llu events of this process were dropped (see earlier messages)",
                 static_cast<unsigned long long>(local.events_dropped));
}

void emergency_flush(const char* reason) {
  State& s = state();
  if (!s.finalize_pending.exchange(false)) return;
  s.phase = Phase::Stopped;
  s.thread_lookup_ok = false;
  // Never block: a thread interrupted by a signal may hold any of these locks.
  std::unique_lock<std::mutex> lock(s.mutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    log::error("%s: trace not written (recorder busy)", reason);
    return;
  }
  std::uint64_t written = 0, skipped = 0;
  for (auto& loc : s.locations) {
    std::unique_lock<std::mutex> wl(LocationAccess::write_mutex(*loc), std::try_to_lock);
    if (!wl.owns_lock()) {
      ++skipped;
      continue;
    }
    LocationAccess::write_out(*loc, s, /*mark_flush=*/false);
    LocationAccess::close_writer(*loc, s);
    written += LocationAccess::stats(*loc).events_written;
  }
  log::error("%s: wrote %llu events of this process to '%s'%s; the archive lacks its global "
             "definitions (no collective finalize), so OTF2 readers cannot open it",
             reason, static_cast<unsigned long long>(written), s.archive_path.c_str(),
             skipped ? " (some threads were busy and are missing)" : "");
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
    out.buffer_flushes += st.flushes;
  }
  return out;
}

} // namespace htrace::record
