#include "bench_config.h"

#include "cli.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>

namespace htrace::bench {

const char* const kDescription =
    "Collective latency on the global clock; run it under mpirun (tools/htrace-bench/README.md).";

const char* op_name(Op op) {
  switch (op) {
  case Op::Barrier:
    return "barrier";
  case Op::Bcast:
    return "bcast";
  case Op::Reduce:
    return "reduce";
  case Op::Allreduce:
    return "allreduce";
  case Op::Allgather:
    return "allgather";
  case Op::Alltoall:
    return "alltoall";
  }
  return "?";
}

const char* sync_name(SyncMethod method) {
  switch (method) {
  case SyncMethod::Barrier:
    return "barrier";
  case SyncMethod::Window:
    return "window";
  case SyncMethod::RoundTime:
    return "roundtime";
  case SyncMethod::Harmonize:
    return "harmonize";
  }
  return "?";
}

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    items.push_back(item);
  return items;
}

bool parse_bytes(const std::string& text, std::size_t& out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  std::string suffix = end;
  if (suffix == "k" || suffix == "K")
    v <<= 10;
  else if (suffix == "M" || suffix == "m")
    v <<= 20;
  else if (!suffix.empty())
    return false;
  if (errno != 0 || v > (1ull << 30)) return false;
  out = static_cast<std::size_t>(v);
  return true;
}

bool parse_op(const std::string& name, Op& op) {
  for (Op o : {Op::Barrier, Op::Bcast, Op::Reduce, Op::Allreduce, Op::Allgather, Op::Alltoall})
    if (name == op_name(o)) return op = o, true;
  return false;
}

bool parse_sync(const std::string& name, SyncMethod& method) {
  for (SyncMethod m :
       {SyncMethod::Barrier, SyncMethod::Window, SyncMethod::RoundTime, SyncMethod::Harmonize})
    if (name == sync_name(m)) return method = m, true;
  return false;
}

// The lists and names given as text, turned into the configuration once CLI11 has parsed.
struct ListArgs {
  std::string ops, sizes, sync;
};

std::string apply_lists(const ListArgs& text, const CLI::App& app, BenchConfig& c) {
  if (app.count("--ops") > 0) {
    c.ops.clear();
    for (const std::string& name : split(text.ops)) {
      Op op;
      if (!parse_op(name, op)) return "unknown operation '" + name + "'";
      c.ops.push_back(op);
    }
    if (c.ops.empty()) return "--ops needs at least one operation";
  }
  if (app.count("--sizes") > 0) {
    c.sizes.clear();
    for (const std::string& item : split(text.sizes)) {
      std::size_t bytes = 0;
      if (!parse_bytes(item, bytes))
        return "bad message size '" + item + "' (bytes, k or M suffix, <= 1G)";
      c.sizes.push_back(bytes);
    }
    if (c.sizes.empty()) return "--sizes needs at least one size";
  }
  if (app.count("--sync") > 0 && !parse_sync(text.sync, c.sync))
    return "unknown --sync '" + text.sync + "' (barrier, window, roundtime, harmonize)";
  return "";
}

// `compare` works on files only: benchmark options with it are a mistake, not something to ignore.
std::string check_compare(const CLI::App& app, const CommandLine& line) {
  for (const CLI::Option* option : app.get_options())
    if (option->count() > 0)
      return "compare takes no benchmark option (" + option->get_name() + ")";
  if (line.compare_a.empty() || line.compare_b.empty())
    return "compare needs two --raw files: compare A.csv B.csv [-o OUT.csv]";
  return "";
}

} // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine line;
  BenchConfig& c = line.config;
  ListArgs lists;
  CLI::App app(kDescription, "htrace-bench");
  cli::configure(app);
  app.add_option("--ops", lists.ops,
                 "barrier,bcast,reduce,allreduce,allgather,alltoall (default: all)")
      ->type_name("LIST");
  app.add_option("--sizes", lists.sizes,
                 "message sizes in bytes per rank, k/M suffixes (default 8,1024,16k)")
      ->type_name("LIST");
  app.add_option("--sync", lists.sync,
                 "barrier | window | roundtime | harmonize (default roundtime)")
      ->type_name("METHOD");
  app.add_option("--budget", c.budget_s, "measuring time per operation and size (default 0.5)")
      ->check(cli::number("a number of seconds > 0", [](double v) { return v > 0; }))
      ->type_name("SECONDS");
  app.add_option("--max-reps", c.max_reps,
                 "at most N measurements per operation and size (default 100000)")
      ->check(cli::integer(1, 1000000000))
      ->type_name("N");
  app.add_option("--window-us", c.window_us,
                 "window length for --sync window (default: from a pilot run)")
      ->check(cli::number("a number of microseconds > 0", [](double v) { return v > 0; }))
      ->type_name("US");
  app.add_option("--slack-factor", c.slack_factor,
                 "Round-Time start = now + B x broadcast latency (default 2)")
      ->check(cli::number("a number >= 1", [](double v) { return v >= 1; }))
      ->type_name("B");
  app.add_option("--seed", c.seed, "seed of the shuffled experiment order (default: random)")
      ->check(cli::integer(1, LONG_MAX))
      ->type_name("N");
  app.add_option("--clock-sync", c.clock_sync,
                 "clock synchronization, HTRACE_SYNC grammar (default hca3)")
      ->type_name("CFG");
  app.add_option("--csv", c.csv_path, "summary per operation and size")->type_name("FILE");
  app.add_option("--raw", c.raw_path, "every measurement (the input of 'compare')")
      ->type_name("FILE");

  CLI::App* compare = app.add_subcommand(
      "compare", "two --raw files: Wilcoxon rank-sum test per operation and size");
  compare->add_option("A", line.compare_a, "raw file of the first run")->type_name("A.csv");
  compare->add_option("B", line.compare_b, "raw file of the second run")->type_name("B.csv");
  compare->add_option("-o,--output", line.compare_output, "the result (default: stdout)")
      ->type_name("OUT.csv");

  line.outcome = cli::parse(app, argc, argv, [&]() -> std::string {
    return compare->parsed() ? check_compare(app, line) : apply_lists(lists, app, c);
  });
  line.compare = compare->parsed();
  return line;
}

} // namespace htrace::bench
