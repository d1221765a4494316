// htrace-correct: removes clock-condition violations from an OTF2 archive with the controlled
// logical clock. Thin driver over the correct/ library; works standalone or under mpirun.
#include "correct/engine.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mpi.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

const char* const kUsage =
    "usage: htrace-correct [options] IN OUT\n"
    "       mpirun -np P htrace-correct [options] IN OUT\n"
    "  IN   OTF2 archive directory or its .otf2 anchor file (never modified)\n"
    "  OUT  new archive directory (written atomically)\n"
    "options:\n"
    "  --check              report violations only, write nothing (OUT not needed)\n"
    "  --json               print the report as JSON\n"
    "  --force              replace an existing OUT\n"
    "  --lmin-intra NS      minimum MPI latency inside a node (default: the archive's value, else\n"
    "                       1000, lowered to what the trace shows)\n"
    "  --lmin-inter NS      minimum MPI latency between nodes (default: as --lmin-intra)\n"
    "  --lmin-omp NS        minimum OpenMP hand-over latency (default 10, lowered to what the\n"
    "                       trace shows)\n"
    "  --gamma G            forward controller (default 0.99999)\n"
    "  --delta NS           minimum spacing of events of one location (default 1)\n"
    "  --slope M            backward amortization slope (default 0.01)\n"
    "  --no-presync         skip the interpolation of htrace's clock measurements\n"
    "  --presync-max-uncertainty NS  ignore clock measurements less certain than this (default:\n"
    "                       use every measurement)\n"
    "  --no-progress        no progress display on a terminal\n"
    "  -h, --help           this text\n";

[[noreturn]] void usage_error(int rank, const std::string& msg) {
  if (rank == 0) std::fprintf(stderr, "htrace-correct: error: %s\n%s", msg.c_str(), kUsage);
  MPI_Finalize();
  std::exit(2);
}

bool parse(int argc, char** argv, int rank, htrace::correct::Options& o) {
  std::vector<std::string> positional;
  bool progress = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(rank, "option " + a + " needs a value");
      return argv[++i];
    };
    auto number = [&](const std::string& v) -> double {
      char* end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || d < 0)
        usage_error(rank, "option " + a + ": '" + v + "' is not a non-negative number");
      return d;
    };
    if (a == "-h" || a == "--help") {
      if (rank == 0) std::fputs(kUsage, stdout);
      return false;
    } else if (a == "--check")
      o.check_only = true;
    else if (a == "--json")
      o.json = true;
    else if (a == "--force")
      o.force = true;
    else if (a == "--no-presync")
      o.presync = false;
    else if (a == "--no-progress")
      progress = false;
    else if (a == "--lmin-intra")
      o.lmin_intra_ns = static_cast<int64_t>(number(value()));
    else if (a == "--lmin-inter")
      o.lmin_inter_ns = static_cast<int64_t>(number(value()));
    else if (a == "--lmin-omp")
      o.lmin_omp_ns = static_cast<int64_t>(number(value()));
    else if (a == "--presync-max-uncertainty")
      o.presync_max_uncertainty_ns = static_cast<int64_t>(number(value()));
    else if (a == "--gamma")
      o.gamma = number(value());
    else if (a == "--delta")
      o.delta_ns = static_cast<int64_t>(number(value()));
    else if (a == "--slope")
      o.slope = number(value());
    else if (a.size() > 1 && a[0] == '-')
      usage_error(rank, "unknown option '" + a + "'");
    else
      positional.push_back(a);
  }
  // --check takes IN, and ignores an OUT given anyway.
  const bool counts_ok = positional.size() == 2 || (o.check_only && positional.size() == 1);
  if (!counts_ok) usage_error(rank, o.check_only ? "expected IN" : "expected IN and OUT");
  if (o.gamma <= 0 || o.gamma > 1) usage_error(rank, "--gamma must be in (0, 1]");
  if (o.slope <= 0) usage_error(rank, "--slope must be positive");
  // Events of one location must stay strictly ordered; the ramps divide by their spacing.
  if (o.delta_ns < 1) usage_error(rank, "--delta must be at least 1 (ns)");
  o.input = positional[0];
  if (positional.size() > 1) o.output = positional[1];
  o.progress = progress && isatty(STDERR_FILENO);
  return true;
}

} // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) must fail the write that crosses it, reported like a full disk,
  // not kill the process with SIGXFSZ halfway through the output.
  std::signal(SIGXFSZ, SIG_IGN);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  htrace::correct::Options options;
  if (!parse(argc, argv, rank, options)) {
    MPI_Finalize();
    return 0;
  }
  using namespace htrace::correct;
  // Exit codes (error.h): every error is raised on all ranks together, so all exit alike.
  int status = kExitSuccess;
  try {
    Report report = correct_archive(options, MPI_COMM_WORLD);
    if (rank == 0) {
      if (options.json)
        print_json(report, std::cout);
      else
        print_text(report, std::cout);
    }
    for (uint64_t v : report.violations_after)
      if (v) status = kExitViolations;
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    if (!error || !error->agreed()) {
      // Rank-local (out of memory, a bug): the other ranks may wait in a collective for this
      // one, so the job ends here.
      std::fprintf(stderr, "htrace-correct: internal error on rank %d: %s\n", rank, e.what());
      if (size > 1) MPI_Abort(MPI_COMM_WORLD, kExitInternal);
      MPI_Finalize();
      return kExitInternal;
    }
    if (rank == 0) std::fprintf(stderr, "htrace-correct: error: %s\n", e.what());
    status = error->exit_code();
  }
  MPI_Finalize();
  return status;
}
