// Command line of htrace-bench: what to measure and how to synchronize the processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace htrace::bench {

enum class Op { Barrier, Bcast, Reduce, Allreduce, Allgather, Alltoall };
enum class SyncMethod { Barrier, Window, RoundTime, Harmonize };

const char* op_name(Op op);
const char* sync_name(SyncMethod method);

struct BenchConfig {
  std::vector<Op> ops{Op::Barrier,   Op::Bcast,     Op::Reduce,
                      Op::Allreduce, Op::Allgather, Op::Alltoall};
  std::vector<std::size_t> sizes{8, 1024, 16384}; ///< bytes per rank (ignored by barrier)
  SyncMethod sync = SyncMethod::RoundTime;
  double budget_s = 0.5;     ///< measuring time per experiment (op, size)
  long max_reps = 100000;    ///< upper bound on measurements per experiment
  double window_us = 0;      ///< window length; 0 = derived from a pilot run of each experiment
  double slack_factor = 2.0; ///< Round-Time's B: start time = now + B * broadcast latency
  std::uint64_t seed = 0;    ///< experiment order; 0 = drawn at random by rank 0
  std::string clock_sync = "hca3"; ///< grammar of HTRACE_SYNC
  std::string csv_path;            ///< summary per experiment
  std::string raw_path;            ///< one row per measurement (input of `compare`)
};

struct ParseResult {
  BenchConfig config;
  std::string error; ///< usage error (exit 2) when not empty
  bool help = false;
};

ParseResult parse_command_line(const std::vector<std::string>& args);
extern const char* const kUsage;

} // namespace htrace::bench
