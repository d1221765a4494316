// Recorder lifecycle: start() in MPI_Init, finalize() in MPI_Finalize, emergency_flush() for
// MPI_Abort, fatal signals and exits without MPI_Finalize. All MPI traffic is PMPI on the
// tracer's private communicator.
#include "clock/base_clock.h"
#include "common/log.h"
#include "record/archive.h"
#include "record/archive_name.h"
#include "record/global_defs.h"
#include "record/location_writer.h"

#include <cstdlib>
#include <ctime>
#include <htrace/archive_properties.h>
#include <htrace/version.h>
#include <sys/stat.h>
#include <unistd.h>

namespace htrace::record {

Location* existing_thread_location();

namespace {

/// Rank 0 decides, everybody learns the path ("" = do not trace).
std::string agree_on_path(State& s) {
  std::string path;
  if (s.rank == 0) {
    const ArchiveChoice choice = choose_archive_path(s.options, program_name(), std::time(nullptr));
    if (!choice.ok())
      log::error("%s", choice.error.c_str());
    else if (!choice.note.empty())
      log::warning("%s", choice.note.c_str());
    path = choice.path;
  }
  unsigned long length = path.size();
  PMPI_Bcast(&length, 1, MPI_UNSIGNED_LONG, 0, s.comm);
  path.resize(length);
  if (length) PMPI_Bcast(path.data(), static_cast<int>(length), MPI_CHAR, 0, s.comm);
  return path;
}

/// The caller becomes thread 0 (location id == world rank); other threads keep their order of
/// first event. Team members registered before start() are renamed accordingly.
void assign_location_ids(State& s) {
  std::lock_guard<std::mutex> lock(s.mutex);
  Location* self = existing_thread_location();
  std::vector<std::unique_ptr<LocationImpl>> ordered;
  for (auto& loc : s.locations)
    if (loc.get() == self) ordered.push_back(std::move(loc));
  for (auto& loc : s.locations)
    if (loc) ordered.push_back(std::move(loc));
  std::vector<LocationId> renamed(ordered.size());
  for (std::uint32_t k = 0; k < ordered.size(); ++k) {
    const LocationId old_index = LocationAccess::index(*ordered[k]);
    const LocationId id = (static_cast<LocationId>(k) << 32) | static_cast<std::uint32_t>(s.rank);
    if (old_index < renamed.size()) renamed[old_index] = id;
    LocationAccess::set_identity(*ordered[k], k, id);
  }
  for (auto& c : s.comms)
    for (auto& member : c.team_locations)
      if (member != kNoLocation && (member >> 32) < renamed.size()) member = renamed[member >> 32];
  s.team_by_members.clear(); // keys hold the provisional ids
  s.locations = std::move(ordered);
  s.next_index = static_cast<std::uint32_t>(s.locations.size());
}

void exit_without_finalize() {
  if (state().phase.load() == Phase::Recording) emergency_flush("exit without MPI_Finalize");
}

void disable(State& s) {
  s.phase = Phase::Disabled;
  detail::g_thread_lookup_ok = false;
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& loc : s.locations) {
    std::lock_guard<std::mutex> wl(LocationAccess::write_mutex(*loc));
    LocationAccess::discard(*loc);
  }
}

} // namespace

bool start(void* mpi_comm_handle) {
  State& s = state();
  Options options;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    ensure_configured_locked(s);
    options = s.options;
  }
  return start(mpi_comm_handle, options);
}

bool start(void* mpi_comm_handle, const Options& options) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.options = options;
    s.configured = true;
  }
  if (!options.enable || s.phase.load() != Phase::BeforeStart || !mpi_comm_handle) {
    disable(s);
    return false;
  }
  s.comm = *static_cast<MPI_Comm*>(mpi_comm_handle);
  PMPI_Comm_rank(s.comm, &s.rank);
  PMPI_Comm_size(s.comm, &s.size);
  log::set_rank(s.rank);
  s.start_base_ns = clock::now();
  s.start_realtime_ns = clock::posix_now(CLOCK_REALTIME);
  s.start_monotonic_ns = clock::posix_now(CLOCK_MONOTONIC);

  const std::string path = agree_on_path(s);
  int ok = path.empty() ? 0 : 1;
  if (ok) {
    const std::string error = open_archive(s, path);
    if (!error.empty()) {
      log::error("cannot create the trace archive '%s': %s; the application runs untraced",
                 path.c_str(), error.c_str());
      ok = 0;
    }
  }
  // Every rank must take the same decision, or the archive's collective calls would hang.
  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, s.comm);
  if (!all_ok) {
    // A half-open archive is abandoned, not closed: closing is collective and some ranks may
    // never have opened theirs.
    s.archive = nullptr;
    disable(s);
    return false;
  }
  s.archive_path = path;
  s.budget.set_limit(options.budget);
  set_archive_property(HTRACE_PROP_VERSION, HTRACE_VERSION_STRING);

  if (!existing_thread_location()) thread(); // the caller becomes thread 0 even without events
  assign_location_ids(s);
  s.archive_ready = true;
  s.finalize_pending = true;
  s.phase = Phase::Recording;
  static bool atexit_registered = false;
  if (!atexit_registered) atexit_registered = std::atexit(exit_without_finalize) == 0;
  if (s.rank == 0) log::debug("tracing into '%s'", path.c_str());
  return true;
}

void set_global_time_map(const clock::GlobalTimeMap& map) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.map_mutex);
  s.map = map;
  s.map_version.fetch_add(1, std::memory_order_release);
}

void set_archive_property(const std::string& name, const std::string& value) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& p : s.archive_properties)
    if (p.first == name) {
      p.second = value;
      return;
    }
  s.archive_properties.emplace_back(name, value);
}

void set_process_property(const std::string& name, std::int64_t value) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& p : s.process_properties)
    if (p.first == name) {
      p.second = value;
      return;
    }
  s.process_properties.emplace_back(name, value);
}

int world_rank() {
  return state().rank;
}
bool recording() {
  return state().phase.load() == Phase::Recording;
}

} // namespace htrace::record
