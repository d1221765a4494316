#include "bench_run.h"

#include "clock/base_clock.h"
#include "clock/sync.h"
#include "common/atomic_file.h"
#include "measure.h"
#include "report.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>
#include <utility>

namespace htrace::bench {
namespace {

constexpr std::int64_t kResyncAfterNs = 10'000'000'000; // refresh the clock model every 10 s

bool synchronize_clock(Context& c, const BenchConfig& config) {
  const clock::SyncOutcome outcome = clock::synchronize(c.comm, config.clock_sync);
  int ok = outcome.ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c.comm);
  if (!ok) {
    if (c.rank == 0)
      std::fprintf(stderr, "htrace-bench: error: clock synchronization '%s' failed: %s\n",
                   config.clock_sync.c_str(), outcome.error.c_str());
    return false;
  }
  c.map = outcome.map;
  return true;
}

} // namespace

int run_benchmark(const BenchConfig& config) {
  Context c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c.comm);
  MPI_Comm_rank(c.comm, &c.rank);
  MPI_Comm_size(c.comm, &c.size);
  if (!synchronize_clock(c, config)) return 1;
  std::int64_t last_sync = clock::now();
  c.bcast_latency_ns = estimate_bcast_latency(c.comm);

  std::vector<std::pair<Op, std::size_t>> experiments;
  for (Op op : config.ops) {
    if (op == Op::Barrier)
      experiments.emplace_back(op, 0);
    else
      for (std::size_t bytes : config.sizes)
        experiments.emplace_back(op, bytes);
  }
  std::uint64_t seed = config.seed;
  if (seed == 0 && c.rank == 0) seed = std::random_device{}() | 1u;
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, c.comm);
  std::mt19937_64 engine(seed);
  std::shuffle(experiments.begin(), experiments.end(), engine);

  std::vector<Summary> summaries;
  std::ostringstream raw;
  raw << kRawHeader << '\n';
  if (c.rank == 0) {
    std::printf("# htrace-bench: %d ranks, sync %s, budget %.3g s per experiment, seed %llu, "
                "broadcast round trip %.1f us\n",
                c.size, sync_name(config.sync), config.budget_s,
                static_cast<unsigned long long>(seed), c.bcast_latency_ns / 1e3);
    print_table_header(stdout);
  }
  for (const auto& [op, bytes] : experiments) {
    if (clock::now() - last_sync > kResyncAfterNs) {
      if (!synchronize_clock(c, config)) return 1;
      last_sync = clock::now();
    }
    const std::vector<Measurement> measured = run_experiment(c, config, op, bytes);
    if (c.rank != 0) continue;
    summaries.push_back(summarize(op_name(op), sync_name(config.sync), bytes, c.size, measured));
    print_table_row(stdout, summaries.back());
    std::fflush(stdout);
    for (std::size_t i = 0; i < measured.size(); ++i)
      raw << op_name(op) << ',' << bytes << ',' << sync_name(config.sync) << ',' << i << ','
          << measured[i].runtime_ns << ',' << measured[i].exit_skew_ns << ','
          << (measured[i].valid ? 1 : 0) << '\n';
  }
  int status = 0;
  if (c.rank == 0) {
    std::string error;
    if (!config.csv_path.empty()) {
      std::string text = std::string(kSummaryHeader) + '\n';
      std::sort(summaries.begin(), summaries.end(), [](const Summary& a, const Summary& b) {
        return std::make_pair(a.op, a.bytes) < std::make_pair(b.op, b.bytes);
      });
      for (const Summary& s : summaries)
        text += summary_row(s) + '\n';
      if (!write_file_atomically(config.csv_path, text, error)) {
        std::fprintf(stderr, "htrace-bench: error: '%s': %s\n", config.csv_path.c_str(),
                     error.c_str());
        status = 1;
      }
    }
    if (!config.raw_path.empty() && !write_file_atomically(config.raw_path, raw.str(), error)) {
      std::fprintf(stderr, "htrace-bench: error: '%s': %s\n", config.raw_path.c_str(),
                   error.c_str());
      status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, c.comm);
  MPI_Comm_free(&c.comm);
  return status;
}

} // namespace htrace::bench
