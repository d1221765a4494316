// htrace-clockcheck: the accuracy check of Hunold & Carpen-Amarie (Algorithm 6). Run it under
// mpirun: it synchronizes with each configuration given, has rank 0 measure every rank's (or a
// sample's) offset on the global clock right after the sync and again after --wait seconds, and
// prints max and median |offset| and the sync duration per configuration. On the emulated cluster
// (HTRACE_CLUSTER_OFFSETS) it also reports the error against the known true offsets.
#include "cli.h"
#include "clock/accuracy.h"
#include "clock/base_clock.h"
#include "clock/mpi_transport.h"
#include "common/atomic_file.h"
#include "common/log.h"
#include "common/median.h"
#include "ground_truth.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mpi.h>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace htrace::clock;
using htrace::clockcheck::GroundTruth;

const char* const kDescription =
    "The accuracy check of Hunold & Carpen-Amarie (Algorithm 6); run it under mpirun:\n"
    "  mpirun ... htrace-clockcheck [OPTIONS]";

struct Args {
  std::vector<std::string> configs{"h2hca"};
  double wait_s = 0;
  int sample = 0;
  int pingpongs = 20;
  std::string clock = "monotonic_raw"; // libhtrace's default
  std::string csv, per_rank;
};

// ';'-separated configurations; blank items are skipped.
std::vector<std::string> split_configs(const std::string& list) {
  std::vector<std::string> configs;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ';');)
    if (item.find_first_not_of(" \t") != std::string::npos) configs.push_back(item);
  return configs;
}

// Parses on every rank and prints nothing (rank 0 reports the outcome).
htrace::cli::Outcome parse_args(int argc, char** argv, Args& a) {
  CLI::App app(kDescription, "htrace-clockcheck");
  htrace::cli::configure(app);
  std::string algorithms;
  app.add_option("--algorithms", algorithms,
                 "';'-separated HTRACE_SYNC configurations (default \"h2hca\")")
      ->type_name("LIST");
  app.add_option("--wait", a.wait_s,
                 "measure again after this wait (default 0: once, right after the sync)")
      ->check(htrace::cli::number("a number of seconds in 0..3600",
                                  [](double v) { return v >= 0 && v <= 3600; }))
      ->type_name("SECONDS");
  app.add_option("--sample", a.sample,
                 "measure N evenly spaced ranks instead of all (default: all)")
      ->check(htrace::cli::integer(0, 1000000))
      ->type_name("N");
  app.add_option("--pingpongs", a.pingpongs, "ping-pongs per offset measurement (default 20)")
      ->check(htrace::cli::integer(1, 1000000))
      ->type_name("N");
  app.add_option("--clock", a.clock,
                 "base clock: monotonic, monotonic_raw or tsc (default monotonic)")
      ->type_name("NAME");
  app.add_option("--csv", a.csv, "one row per configuration and check time")->type_name("FILE");
  app.add_option("--per-rank", a.per_rank,
                 "one row per rank, configuration and check time (model, offset, truth)")
      ->type_name("FILE");
  CLI::Option* algorithms_given = app.get_option("--algorithms");
  return htrace::cli::parse(app, argc, argv, [&]() -> std::string {
    if (algorithms_given->count() == 0) return "";
    a.configs = split_configs(algorithms);
    return a.configs.empty() ? "--algorithms '" + algorithms + "' names no configuration" : "";
  });
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
  s.max = *std::max_element(v.begin(), v.end());
  s.median = htrace::median(std::move(v));
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
  htrace::log::set_rank(rank); // the clock code's warnings name the rank, as in the tracer
  std::unique_ptr<MpiTransport> transport; // must go before MPI_Finalize (it owns communicators)
  auto finish = [&](int code) {
    transport.reset();
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return code;
  };

  Args args;
  const htrace::cli::Outcome outcome = parse_args(argc, argv, args);
  if (!outcome.run()) return finish(htrace::cli::report(outcome, rank == 0));
  std::string error;
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
              "model_offset_ns,truth_error_ns,slope,clock_check,check_offset_ns,"
              "check_uncertainty_ns,check_batches\n";
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
      const htrace::clock::ClockCheck& clock_check = check.run.stats.clock_check;
      {
        std::ostringstream line;
        line << '"' << args.configs[c] << "\"," << rank << ',' << true_offset << ',' << after_s
             << ',' << mine.offset_ns << ',' << mine.uncertainty_ns << ',' << model_offset << ','
             << (truth ? std::to_string(model_offset - true_offset) : "") << ','
             << check.run.clock.to_time_map(local).slope << ',' << verdict_name(clock_check.verdict)
             << ',' << clock_check.measurement.offset_ns << ','
             << clock_check.measurement.uncertainty_ns << ',' << clock_check.batches << '\n';
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
