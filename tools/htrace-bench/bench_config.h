// Command line of htrace-bench: what to measure and how to synchronize the processes.
#pragma once

#include "outcome.h"

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

/// The command line: a benchmark run (under mpirun) or `compare` of two raw files (serial).
struct CommandLine {
  cli::Outcome outcome; ///< Run, or the help, version or usage error to report
  bool compare = false;
  BenchConfig config;
  std::string compare_a, compare_b, compare_output;
};

CommandLine parse_command_line(int argc, const char* const* argv);

} // namespace htrace::bench
