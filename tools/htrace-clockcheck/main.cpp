// htrace-clockcheck: the accuracy check of Hunold & Carpen-Amarie (Algorithm 6). Run it under
// mpirun: it synchronizes with each configuration given, has rank 0 measure every rank's (or a
// sample's) offset on the global clock right after the sync and again after --wait seconds, and
// prints max and median |offset| and the sync duration per configuration. On the emulated cluster
// (HTRACE_CLUSTER_OFFSETS) it also reports the error against the known true offsets.
#include "clock/accuracy.h"
#include "clock/base_clock.h"
#include "clock/mpi_transport.h"
#include "common/atomic_file.h"
#include "ground_truth.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mpi.h>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace htrace::clock;
using htrace::clockcheck::GroundTruth;

const char* kUsage =
    "usage: mpirun ... htrace-clockcheck [options]\n"
    "  --algorithms LIST  ';'-separated HTRACE_SYNC configurations (default \"h2hca\")\n"
    "  --wait SECONDS     measure again after this wait (default 0: once, right after the sync)\n"
    "  --sample N         measure N evenly spaced ranks instead of all (default: all)\n"
    "  --pingpongs N      ping-pongs per offset measurement (default 20)\n"
    "  --clock NAME       base clock: monotonic, monotonic_raw or tsc (default monotonic)\n"
    "  --csv FILE         one row per configuration and check time\n"
    "  --per-rank FILE    one row per rank, configuration and check time (model, offset, truth)\n";

struct Args {
  std::vector<std::string> configs{"h2hca"};
  double wait_s = 0;
  int sample = 0;
  int pingpongs = 20;
  std::string clock = "monotonic";
  std::string csv, per_rank;
};

// Returns 0 on success, 2 (usage) with `error` otherwise.
int parse_args(int argc, char** argv, Args& a, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "-h" || opt == "--help") {
      error = "";
      return 3;
    }
    if (i + 1 >= argc) {
      error = "option '" + opt + "' needs a value";
      return 2;
    }
    const std::string v = argv[++i];
    char* end = nullptr;
    if (opt == "--algorithms") {
      a.configs.clear();
      std::stringstream in(v);
      for (std::string item; std::getline(in, item, ';');)
        if (item.find_first_not_of(" \t") != std::string::npos) a.configs.push_back(item);
      if (a.configs.empty()) {
        error = "--algorithms '" + v + "' names no configuration";
        return 2;
      }
    } else if (opt == "--wait") {
      a.wait_s = std::strtod(v.c_str(), &end);
      if (*end || !(a.wait_s >= 0) || a.wait_s > 3600) {
        error = "--wait '" + v + "' is not a number of seconds in 0..3600";
        return 2;
      }
    } else if (opt == "--sample" || opt == "--pingpongs") {
      const long n = std::strtol(v.c_str(), &end, 10);
      if (*end || n < (opt == "--sample" ? 0 : 1) || n > 1000000) {
        error = opt + " '" + v + "' is not a suitable integer";
        return 2;
      }
      (opt == "--sample" ? a.sample : a.pingpongs) = static_cast<int>(n);
    } else if (opt == "--clock") {
      a.clock = v;
    } else if (opt == "--csv") {
      a.csv = v;
    } else if (opt == "--per-rank") {
      a.per_rank = v;
    } else {
      error = "unknown option '" + opt + "'";
      return 2;
    }
  }
  return 0;
}

std::vector<int> measured_ranks(int size, int sample) {
  std::vector<int> ranks;
  const int others = size - 1;
  if (sample <= 0 || sample >= others) {
    for (int r = 1; r < size; ++r)
      ranks.push_back(r);
  } else {
    for (int i = 0; i < sample; ++i)
      ranks.push_back(1 + static_cast<int>(static_cast<long long>(i) * others / sample));
  }
  return ranks;
}

struct Summary {
  std::int64_t max = 0, median = 0;
};
Summary summarize(std::vector<std::int64_t> v) {
  Summary s;
  if (v.empty()) return s;
  for (auto& x : v)
    x = std::llabs(x);
  std::sort(v.begin(), v.end());
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return s;
}

// The file's name in front of the system's reason, as every message of this tool has.
bool write_atomically(const std::string& path, const std::string& text, std::string& error) {
  if (htrace::write_file_atomically(path, text, error)) return true;
  error = "'" + path + "': " + error;
  return false;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::unique_ptr<MpiTransport> transport; // must go before MPI_Finalize (it owns communicators)
  auto finish = [&](int code) {
    transport.reset();
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return code;
  };

  Args args;
  std::string error;
  const int arg_status = parse_args(argc, argv, args, error);
  if (arg_status != 0) {
    if (rank == 0) {
      if (arg_status == 3)
        std::fputs(kUsage, stdout);
      else
        std::fprintf(stderr, "htrace-clockcheck: error: %s\n%s", error.c_str(), kUsage);
    }
    return finish(arg_status == 3 ? 0 : 2);
  }
  std::vector<SyncConfig> configs;
  for (const auto& text : args.configs) {
    const SyncConfigResult parsed = parse_sync_config(text);
    if (!parsed.ok()) {
      if (rank == 0) std::fprintf(stderr, "htrace-clockcheck: error: %s\n", parsed.error.c_str());
      return finish(1);
    }
    configs.push_back(parsed.config);
  }
  const auto truth = htrace::clockcheck::ground_truth_from_environment(error);
  if (!error.empty()) {
    if (rank == 0) std::fprintf(stderr, "htrace-clockcheck: error: %s\n", error.c_str());
    return finish(1);
  }

  transport = std::make_unique<MpiTransport>(comm);
  MpiTransport& world = *transport;
  {
    if (!setup_base_clock(world, args.clock, error)) {
      if (rank == 0)
        std::fprintf(stderr, "htrace-clockcheck: error: --clock %s: %s\n", args.clock.c_str(),
                     error.c_str());
      return finish(1);
    }
  }
  const std::vector<int> ranks = measured_ranks(size, args.sample);
  const auto wait_ns = static_cast<std::int64_t>(args.wait_s * 1e9);
  const bool two_phases = wait_ns > 0;

  std::ostringstream csv, per_rank;
  csv << "config,canonical,ranks,measured,base_clock,sync_ms,check_after_s,max_abs_offset_ns,"
         "median_abs_offset_ns,max_abs_truth_error_ns,median_abs_truth_error_ns\n";
  per_rank << "config,rank,node_truth_offset_ns,check_after_s,measured_offset_ns,uncertainty_ns,"
              "model_offset_ns,truth_error_ns,slope\n";
  if (rank == 0) {
    std::printf("# htrace-clockcheck: %d ranks, %zu measured, base clock %s, ground truth: %s\n",
                size, ranks.size(), args.clock.c_str(), truth ? "HTRACE_CLUSTER_OFFSETS" : "none");
    std::printf("%-28s %9s %11s %11s %11s %11s", "config", "sync_ms", "max_ns", "median_ns",
                "truth_max", "truth_med");
    if (two_phases)
      std::printf("   after %-4g s: %9s %11s %11s %11s", args.wait_s, "max_ns", "median_ns",
                  "truth_max", "truth_med");
    std::printf("\n");
  }

  for (std::size_t c = 0; c < configs.size(); ++c) {
    const AccuracyCheck check = check_accuracy(
        world, configs[c], [] { return now(); }, ranks, wait_ns, args.pingpongs);
    const std::int64_t true_offset = truth ? truth->offset_of(rank) : 0;
    std::string row = "  " + args.configs[c];
    if (rank == 0) {
      char cell[128];
      std::snprintf(cell, sizeof cell, "%-28s %9.3f", args.configs[c].c_str(),
                    static_cast<double>(check.max_duration_ns) * 1e-6);
      row = cell;
    }
    for (int phase = 0; phase < (two_phases ? 2 : 1); ++phase) {
      const std::int64_t local = phase ? check.local_after_wait : check.local_after_sync;
      const OffsetMeasurement& mine = phase ? check.mine_after_wait : check.mine_after_sync;
      // The model's idea of this rank's offset vs. what the namespaces really set.
      const std::int64_t model_offset = local - check.run.clock.to_global(local);
      const auto truth_errors = world.allgather(model_offset - true_offset);
      const double after_s = phase ? args.wait_s : 0.0;
      {
        std::ostringstream line;
        line << '"' << args.configs[c] << "\"," << rank << ',' << true_offset << ',' << after_s
             << ',' << mine.offset_ns << ',' << mine.uncertainty_ns << ',' << model_offset << ','
             << (truth ? std::to_string(model_offset - true_offset) : "") << ','
             << check.run.clock.to_time_map(local).slope << '\n';
        // Gather the per-rank lines at rank 0 in rank order.
        const std::string text = line.str();
        int len = static_cast<int>(text.size());
        std::vector<int> lens(static_cast<std::size_t>(size));
        MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
        std::vector<int> displs(lens.size(), 0);
        for (std::size_t i = 1; i < lens.size(); ++i)
          displs[i] = displs[i - 1] + lens[i - 1];
        std::string all(rank == 0 ? static_cast<std::size_t>(displs.back() + lens.back()) : 0,
                        '\0');
        MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
                    comm);
        per_rank << all;
      }
      if (rank != 0) continue;
      std::vector<std::int64_t> measured;
      for (const auto& m : phase ? check.after_wait : check.after_sync)
        measured.push_back(m.offset_ns);
      std::vector<std::int64_t> errors;
      for (int r : ranks)
        errors.push_back(truth_errors[static_cast<std::size_t>(r)]);
      const Summary ms = summarize(measured), ts = summarize(errors);
      char cell[160];
      if (truth)
        std::snprintf(cell, sizeof cell, " %11lld %11lld %11lld %11lld",
                      static_cast<long long>(ms.max), static_cast<long long>(ms.median),
                      static_cast<long long>(ts.max), static_cast<long long>(ts.median));
      else
        std::snprintf(cell, sizeof cell, " %11lld %11lld %11s %11s", static_cast<long long>(ms.max),
                      static_cast<long long>(ms.median), "-", "-");
      row += phase ? std::string("   ") + std::string(16, ' ') + cell : std::string(cell);
      csv << '"' << args.configs[c] << "\",\"" << to_string(configs[c]) << "\"," << size << ','
          << ranks.size() << ',' << args.clock << ','
          << static_cast<double>(check.max_duration_ns) * 1e-6 << ',' << after_s << ',' << ms.max
          << ',' << ms.median << ',' << (truth ? std::to_string(ts.max) : "") << ','
          << (truth ? std::to_string(ts.median) : "") << '\n';
    }
    if (rank == 0) {
      std::printf("%s\n", row.c_str());
      std::fflush(stdout);
    }
  }

  int status = 0;
  if (rank == 0) {
    if (!args.csv.empty() && !write_atomically(args.csv, csv.str(), error)) status = 1;
    if (!args.per_rank.empty() && !write_atomically(args.per_rank, per_rank.str(), error))
      status = 1;
    if (status) std::fprintf(stderr, "htrace-clockcheck: error: %s\n", error.c_str());
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  return finish(status);
}
