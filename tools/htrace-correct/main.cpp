// htrace-correct: removes clock-condition violations from an OTF2 archive with the controlled
// logical clock. Thin driver over the correct/ library; works standalone or under mpirun.
// Standalone (and under mpirun -np 1) it never initializes MPI (correct/launcher.h).
#include "cli.h"
#include "correct/engine.h"
#include "correct/interrupt_cleanup.h"
#include "correct/launcher.h"
#include "correct/mpi_rank_group.h"
#include "huge_page_heap.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <mpi.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// The usage text is CLI11's, from these descriptions (tools/common/cli.h: the tools' convention).
const char* const kDescription =
    "Removes clock-condition violations from an OTF2 archive with the controlled logical clock.\n"
    "Serial, or in parallel under 'mpirun -np P' (the same output for every P).";

// The same on every rank; documented in correct/README.md (correct/include/format/error.h).
const char* const kExitCodes =
    "Exit codes: 0 success; 1 violations remain after correction; 2 usage error;\n"
    "3 bad input (IN unreadable, corrupt or inconsistent; nothing written);\n"
    "4 output error (OUT exists, cannot be created or written, disk full; IN untouched,\n"
    "  a previous OUT unchanged); 5 internal error.";

// Cross-option rules, in the order a user fixes them; "" if the command line is usable.
std::string check_options(const htrace::correct::Options& o, const std::string& in,
                          const std::string& out) {
  // --check takes IN, and ignores an OUT given anyway.
  if (in.empty() || (!o.check_only && out.empty()))
    return o.check_only ? "expected IN" : "expected IN and OUT";
  if (o.gamma <= 0 || o.gamma > 1) return "--gamma must be in (0, 1]";
  if (o.slope <= 0) return "--slope must be positive";
  // Events of one location must stay strictly ordered; the ramps divide by their spacing.
  if (o.delta_ns < 1) return "--delta must be at least 1 (ns)";
  return "";
}

// MPI_Finalize if MPI_Init was called.
void finalize(bool mpi) {
  if (mpi) MPI_Finalize();
}

// Fills `o` from the command line. Help and --version are printed by rank 0 and return false; a
// usage error is printed by rank 0 and ends every rank with exit code 2 after MPI_Finalize.
bool parse(int argc, char** argv, int rank, bool mpi, htrace::correct::Options& o) {
  CLI::App app(kDescription, "htrace-correct");
  htrace::cli::configure(app);
  app.footer(kExitCodes);
  const CLI::Validator non_negative =
      htrace::cli::number("a non-negative number", [](double v) { return v >= 0; });
  // Nanosecond options accept any non-negative number (1e3 too) and keep its integer part.
  auto nanoseconds = [&](const char* name, int64_t& target, const char* help) {
    app.add_option_function<double>(
           name, [&target](double v) { target = static_cast<int64_t>(v); }, help)
        ->check(non_negative)
        ->type_name("NS");
  };
  std::string in, out;
  bool no_presync = false, no_progress = false;
  app.add_option("IN", in, "OTF2 archive directory or its .otf2 anchor file (never modified)");
  app.add_option("OUT", out, "new archive directory (written atomically)");
  app.add_flag("--check", o.check_only, "report violations only, write nothing (OUT not needed)");
  app.add_flag("--json", o.json, "print the report as JSON");
  app.add_flag("--force", o.force, "replace an existing OUT");
  nanoseconds("--lmin-intra", o.lmin_intra_ns,
              "minimum MPI latency inside a node (default: the archive's value, else 1000, "
              "lowered to what the trace shows)");
  nanoseconds("--lmin-inter", o.lmin_inter_ns,
              "minimum MPI latency between nodes (default: as --lmin-intra)");
  nanoseconds("--lmin-omp", o.lmin_omp_ns,
              "minimum OpenMP hand-over latency (default 10, lowered to what the trace shows)");
  app.add_option("--gamma", o.gamma, "forward controller, in (0, 1] (default 0.99999)")
      ->check(non_negative)
      ->type_name("G");
  nanoseconds("--delta", o.delta_ns, "minimum spacing of events of one location (default 1)");
  app.add_option("--slope", o.slope, "backward amortization slope, > 0 (default 0.01)")
      ->check(non_negative)
      ->type_name("M");
  app.add_flag("--no-presync", no_presync, "skip the interpolation of htrace's clock measurements");
  app.add_flag("--presync-ends-only", o.presync_ends_only,
               "interpolate only between the measurements at MPI_Init and MPI_Finalize, not "
               "through those taken during the run");
  nanoseconds("--presync-max-uncertainty", o.presync_max_uncertainty_ns,
              "ignore clock measurements less certain than this (default: use every one)");
  app.add_flag("--no-progress", no_progress, "no progress display on a terminal");

  const htrace::cli::Outcome outcome =
      htrace::cli::parse(app, argc, argv, [&] { return check_options(o, in, out); });
  if (!outcome.run()) {
    const int code = htrace::cli::report(outcome, rank == 0);
    if (code == 0) return false;
    finalize(mpi);
    std::exit(code);
  }
  o.input = in;
  o.output = out;
  o.presync = !no_presync;
  o.progress = !no_progress && isatty(STDERR_FILENO);
  return true;
}

} // namespace

int main(int argc, char** argv) {
  htrace::tools::use_huge_page_heap(argv);
  // A file-size limit (ulimit -f) must fail the write that crosses it, reported like a full disk,
  // not kill the process with SIGXFSZ halfway through the output.
  std::signal(SIGXFSZ, SIG_IGN);
  using namespace htrace::correct;
  using htrace::Error;
  const bool mpi = several_processes([](const char* name) { return std::getenv(name); });
  std::unique_ptr<RankGroup> ranks;
  if (mpi) {
    // A rank waiting for the others yields its core instead of spinning on it (Open MPI; unless the
    // user chose otherwise): the ranks share nodes with other work more often than not, and a
    // spinning rank takes the core the rank it waits for needs (2 ranks among other jobs on a
    // 2-core node: 0.9-1.1 s spinning, 0.64-0.71 s yielding, for 10 M events).
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    {
      const auto interrupts = interrupts_stay_on_this_thread();
      MPI_Init(&argc, &argv);
    }
    ranks = std::make_unique<MpiRankGroup>(MPI_COMM_WORLD);
  } else {
    ranks = std::make_unique<SerialRankGroup>();
  }
  const int rank = ranks->rank(), size = ranks->size();
  htrace::correct::Options options;
  if (!parse(argc, argv, rank, mpi, options)) {
    finalize(mpi);
    return 0;
  }
  // Exit codes (format/error.h): every error is raised on all ranks together, so all exit alike.
  int status = htrace::kExitSuccess;
  try {
    Report report = correct_archive(options, *ranks);
    if (rank == 0) {
      if (options.json)
        print_json(report, std::cout);
      else
        print_text(report, std::cout);
    }
    for (uint64_t v : report.violations_after)
      if (v) status = htrace::kExitViolations;
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    if (!error || !error->agreed()) {
      // Rank-local (out of memory, a bug): the other ranks may wait in a collective for this
      // one, so the job ends here.
      std::fprintf(stderr, "htrace-correct: internal error on rank %d: %s\n", rank, e.what());
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, htrace::kExitInternal);
      finalize(mpi);
      return htrace::kExitInternal;
    }
    if (rank == 0) std::fprintf(stderr, "htrace-correct: error: %s\n", e.what());
    status = error->exit_code();
  }
  ranks.reset();
  finalize(mpi);
  return status;
}
