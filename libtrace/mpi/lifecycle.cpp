// Hand-written wrappers (table skeleton "special"): MPI_Init, MPI_Init_thread, MPI_Finalize and
// MPI_Abort drive the recorder and the clock synchronization around the application's MPI life.
#include "clock/base_clock.h"
#include "clock/sync.h"
#include "common/log.h"
#include "common/options.h"
#include "htrace/archive_properties.h"
#include "mpi/clock_checkpoint.h"
#include "mpi/clock_lifecycle.h"
#include "mpi/comm_registry.h"
#include "mpi/entry_point.h"
#include "mpi/fatal_signals.h"
#include "mpi/mpi_library.h"
#include "mpi/p2p_events.h"
#include "mpi/untraced.h"
#include "mpi/wrapper_call.h"
#include "record/snapshot.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <mpi.h>

namespace htrace::mpi {
namespace {

struct Lifecycle {
  Options options;
  MPI_Comm private_comm = MPI_COMM_NULL; ///< the tracer's own traffic: never a user communicator
  bool recorder_started = false;
  bool traced = false; ///< events were recorded (tracing was switched on in MPI_Init)
};
Lifecycle& lifecycle() {
  static Lifecycle l;
  return l;
}

// Elapsed time of MPI_Init is measured on CLOCK_MONOTONIC because the base clock behind
// clock::now() may be switched (e.g. to the TSC) by the synchronization inside the call.
std::int64_t monotonic_ns() {
  return clock::posix_now(CLOCK_MONOTONIC);
}

// Reports the options' problems once per run and decides, the same on every rank, whether to
// trace. The recorder's start is collective, so one rank with a bad value (an MPMD run can give
// ranks different environments) or with HTRACE_ENABLE=0 turns tracing off on all of them; the
// lowest such rank names the value, in one line.
bool agree_to_trace(const OptionsResult& run, int rank) {
  int size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const int enable = run.options.enable ? 1 : 0;
  // One MIN reduction: the first rank with a bad value, whether all ranks enable tracing and
  // (negated) whether any does.
  int local[3] = {run.ok() ? size : rank, enable, -enable};
  int global[3] = {0, 0, 0};
  PMPI_Allreduce(local, global, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0)
    for (const std::string& warning : run.warnings)
      log::warning("%s", warning.c_str());
  if (global[0] == rank)
    log::error("%s; tracing is off for this run (htrace-config lists the options)",
               run.error.c_str());
  if (global[0] < size) return false;
  if (global[1] == 0 && global[2] == -1 && rank == 0)
    log::warning("HTRACE_ENABLE differs between ranks; tracing is off for this run");
  return global[1] == 1;
}

// Rank 0's MPI_Init phases at HTRACE_VERBOSE=2 (bench/initfinal reads them): on oversubscribed
// nodes every collective costs a scheduling round, so which phase waits is worth seeing.
class InitPhases {
public:
  explicit InitPhases(std::int64_t began) : last_(began) {}
  void mark(const char* name) {
    const std::int64_t now = monotonic_ns();
    const int n =
        std::snprintf(text_ + used_, sizeof text_ - used_, "%s%s %.2f ms", used_ == 0 ? "" : ", ",
                      name, static_cast<double>(now - last_) * 1e-6);
    if (n > 0) used_ = std::min(sizeof text_ - 1, used_ + static_cast<std::size_t>(n));
    last_ = now;
  }
  void log(int rank) const {
    if (rank == 0) log::debug("MPI_Init: %s", text_);
  }

private:
  std::int64_t last_;
  char text_[256] = {};
  std::size_t used_ = 0;
};

// Everything after PMPI_Init succeeded. Any failure leaves tracing off; the application runs on.
void start_tracing(FunctionId init_function, std::int64_t init_began) {
  InitPhases phases(init_began);
  phases.mark("PMPI_Init");
  Lifecycle& l = lifecycle();
  const OptionsResult& run = run_options();
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log::set_rank(rank);
  l.options = run.options;
  log::configure(static_cast<int>(l.options.verbose));
  log::set_file(l.options.log_file.c_str());
  if (!agree_to_trace(run, rank)) {
    l.options.enable = false;
    record::configure(l.options); // events buffered before MPI_Init (OMPT) are dropped now
    return;
  }
  phases.mark("agreeing on options");

  PMPI_Comm_dup(MPI_COMM_WORLD, &l.private_comm);
  PMPI_Comm_set_name(l.private_comm, "htrace private");
  if (!record::start(&l.private_comm, l.options)) return; // the recorder said why
  l.recorder_started = true;
  record::add_budget_hook(&stop_tracing_at_budget);
  record::set_archive_property(HTRACE_PROP_MPI_LIBRARY, program_mpi_library());
  register_function_regions();
  g_wrappers.poll_runs.store(l.options.poll_runs, std::memory_order_relaxed);
  const std::string exclusion_warnings = apply_exclusions(l.options.mpi_exclude);
  if (!exclusion_warnings.empty() && rank == 0) log::warning("%s", exclusion_warnings.c_str());
  if (!l.options.filter_file.empty()) {
    const int filtered = apply_filter(run.mpi_filter);
    if (rank == 0)
      log::info("HTRACE_FILTER_FILE '%s': %d MPI functions excluded%s",
                l.options.filter_file.c_str(), filtered,
                run.mpi_filter.file_rules() > 0 ? " (its file-name rules match no MPI function)"
                                                : "");
  }
  register_predefined_comms();
  phases.mark("opening the archive");
  if (!sync_at_init(l.private_comm, l.options))
    return; // logged by clock_lifecycle.cpp; tracing stays off
  phases.mark("clock synchronization");
  // On every rank whose sync succeeded, whatever happens to its own recording below.
  start_clock_checkpoints();
  // From here on the run can be salvaged: definitions and INIT clock measurements are on disk.
  record::snapshot::write_initial();
  install_fatal_signal_handlers();
  phases.mark("salvage snapshot");
  phases.log(rank);
  record::Location* loc = record::thread();
  if (loc == nullptr) return;
  const record::LocalTime end = clock::stamp();
  const record::RegionId region = g_wrappers.regions[static_cast<unsigned>(init_function)];
  loc->enter(clock::stamp_before(end, monotonic_ns() - init_began), region);
  loc->leave(end, region);
  l.traced = true;
  resume_tracing(); // (a budget reached already, by events buffered before MPI_Init, stays)
}

int world_size() {
  int size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void print_summary() {
  const record::Summary s = record::summary();
  // An incomplete archive was already reported once, with what was lost.
  if (record::world_rank() != 0 || !s.archive_complete || !log::enabled(log::Level::Info)) return;
  char budget[96] = "";
  if (s.global_ranks_over_budget != 0)
    std::snprintf(budget, sizeof budget, "; HTRACE_BUDGET stopped recording on %llu of %d ranks",
                  static_cast<unsigned long long>(s.global_ranks_over_budget), world_size());
  // Rank 0 takes part in every clock measurement: its time in them is the run's cost.
  const RunMeasurementStats m = run_measurement_stats();
  char clocks[160] = "";
  if (m.count > 0)
    std::snprintf(clocks, sizeof clocks,
                  "; %d clock measurements during the run (%s interval) took %.1f ms, %.4f %% of "
                  "%.1f s",
                  m.count, m.adaptive ? "adaptive" : "fixed",
                  static_cast<double>(m.spent_ns) * 1e-6,
                  100.0 * static_cast<double>(m.spent_ns) /
                      static_cast<double>(std::max<std::int64_t>(1, m.run_ns)),
                  static_cast<double>(m.run_ns) * 1e-9);
  log::info("trace written to '%s': %llu events, %llu bytes, %llu dropped, %llu timestamps "
            "clamped (up to %lld ns back)%s%s",
            s.archive_path.c_str(), static_cast<unsigned long long>(s.global_events_written),
            static_cast<unsigned long long>(s.global_bytes_written),
            static_cast<unsigned long long>(s.global_events_dropped),
            static_cast<unsigned long long>(s.global_timestamps_clamped),
            static_cast<long long>(s.global_largest_clamp_ns), budget, clocks);
}

} // namespace

void register_function_regions() {
  for (std::size_t i = 0; i < kFunctionCount; ++i)
    if (kFunctions[i].wrapped)
      g_wrappers.regions[i] =
          record::register_region(kFunctions[i].name, record::Paradigm::Mpi, kFunctions[i].role);
}

} // namespace htrace::mpi

using namespace htrace;

HTRACE_ENTRY_POINT int MPI_Init(int* argc, char*** argv) {
  if (!mpi::program_mpi_matches()) return PMPI_Init(argc, argv);
  const std::int64_t began = mpi::monotonic_ns();
  const int rc = [&] {
    const auto guard = mpi::term_signals_off_mpi_threads();
    return PMPI_Init(argc, argv);
  }();
  if (rc == MPI_SUCCESS) mpi::start_tracing(mpi::FunctionId::Init, began);
  return rc;
}

HTRACE_ENTRY_POINT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  if (!mpi::program_mpi_matches()) return PMPI_Init_thread(argc, argv, required, provided);
  const std::int64_t began = mpi::monotonic_ns();
  const int rc = [&] {
    const auto guard = mpi::term_signals_off_mpi_threads();
    return PMPI_Init_thread(argc, argv, required, provided);
  }();
  if (rc == MPI_SUCCESS) mpi::start_tracing(mpi::FunctionId::Init_thread, began);
  return rc;
}

HTRACE_ENTRY_POINT int MPI_Finalize(void) {
  mpi::Lifecycle& l = mpi::lifecycle();
  if (l.recorder_started) {
    record::Location* loc = mpi::g_wrappers.tracing.load() ? record::thread() : nullptr;
    const record::RegionId region =
        mpi::g_wrappers.regions[static_cast<unsigned>(mpi::FunctionId::Finalize)];
    if (loc != nullptr) loc->enter(clock::stamp(), region);
    mpi::stop_clock_checkpoints();
    mpi::measure_at_finalize(l.private_comm, l.options);
    if (loc != nullptr) loc->leave(clock::stamp(), region);
    mpi::g_wrappers.tracing.store(false, std::memory_order_release);
    mpi::g_wrappers.paused.store(false, std::memory_order_relaxed);
    mpi::g_wrappers.budget_spent.store(false, std::memory_order_relaxed);
    mpi::remove_fatal_signal_handlers();
    record::finalize();
    if (l.traced) mpi::print_summary();
    if (l.traced) mpi::report_untraced(l.private_comm, record::world_rank());
    l.recorder_started = false;
  }
  mpi::clear_comm_registry();
  if (l.private_comm != MPI_COMM_NULL) PMPI_Comm_free(&l.private_comm);
  return PMPI_Finalize();
}

HTRACE_ENTRY_POINT int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (mpi::lifecycle().recorder_started) {
    mpi::g_wrappers.tracing.store(false, std::memory_order_release);
    record::emergency_flush("MPI_Abort");
  }
  return PMPI_Abort(comm, errorcode);
}
