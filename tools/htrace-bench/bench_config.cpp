#include "bench_config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <sstream>

namespace htrace::bench {

const char* const kUsage =
    "usage: htrace-bench [options]                 (run under mpirun)\n"
    "       htrace-bench compare A.csv B.csv [-o OUT.csv]\n"
    "  --ops LIST         barrier,bcast,reduce,allreduce,allgather,alltoall (default: all)\n"
    "  --sizes LIST       message sizes in bytes per rank, k/M suffixes (default 8,1024,16k)\n"
    "  --sync METHOD      barrier | window | roundtime | harmonize (default roundtime)\n"
    "  --budget SECONDS   measuring time per operation and size (default 0.5)\n"
    "  --max-reps N       at most N measurements per operation and size (default 100000)\n"
    "  --window-us US     window length for --sync window (default: from a pilot run)\n"
    "  --slack-factor B   Round-Time start = now + B x broadcast latency (default 2)\n"
    "  --seed N           seed of the shuffled experiment order (default: random)\n"
    "  --clock-sync CFG   clock synchronization, HTRACE_SYNC grammar (default hca3)\n"
    "  --csv FILE         summary per operation and size\n"
    "  --raw FILE         every measurement (the input of 'compare')\n"
    "  compare            Wilcoxon rank-sum test per operation and size of two --raw files\n";

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

bool parse_positive(const std::string& text, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && errno == 0 && out > 0;
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

} // namespace

ParseResult parse_command_line(const std::vector<std::string>& args) {
  ParseResult r;
  BenchConfig& c = r.config;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      r.help = true;
      return r;
    }
    static const char* const kValued[] = {
        "--ops",          "--sizes", "--sync",       "--budget", "--max-reps", "--window-us",
        "--slack-factor", "--seed",  "--clock-sync", "--csv",    "--raw"};
    if (std::find(std::begin(kValued), std::end(kValued), a) == std::end(kValued)) {
      r.error =
          a.rfind("-", 0) == 0 ? "unknown option '" + a + "'" : "unexpected argument '" + a + "'";
      return r;
    }
    if (i + 1 >= args.size()) {
      r.error = "option '" + a + "' needs a value";
      return r;
    }
    const std::string& v = args[++i];
    double number = 0;
    if (a == "--ops") {
      c.ops.clear();
      for (const std::string& name : split(v)) {
        Op op;
        if (!parse_op(name, op)) return r.error = "unknown operation '" + name + "'", r;
        c.ops.push_back(op);
      }
      if (c.ops.empty()) return r.error = "--ops needs at least one operation", r;
    } else if (a == "--sizes") {
      c.sizes.clear();
      for (const std::string& item : split(v)) {
        std::size_t bytes = 0;
        if (!parse_bytes(item, bytes))
          return r.error = "bad message size '" + item + "' (bytes, k or M suffix, <= 1G)", r;
        c.sizes.push_back(bytes);
      }
      if (c.sizes.empty()) return r.error = "--sizes needs at least one size", r;
    } else if (a == "--sync") {
      if (!parse_sync(v, c.sync))
        return r.error = "unknown --sync '" + v + "' (barrier, window, roundtime, harmonize)", r;
    } else if (a == "--budget") {
      if (!parse_positive(v, c.budget_s)) return r.error = "--budget needs seconds > 0", r;
    } else if (a == "--max-reps") {
      if (!parse_positive(v, number) || number != static_cast<long>(number))
        return r.error = "--max-reps needs a positive integer", r;
      c.max_reps = static_cast<long>(number);
    } else if (a == "--window-us") {
      if (!parse_positive(v, c.window_us)) return r.error = "--window-us needs microseconds > 0", r;
    } else if (a == "--slack-factor") {
      if (!parse_positive(v, c.slack_factor) || c.slack_factor < 1)
        return r.error = "--slack-factor needs a number >= 1", r;
    } else if (a == "--seed") {
      if (!parse_positive(v, number) || number != static_cast<double>(static_cast<long>(number)))
        return r.error = "--seed needs a positive integer", r;
      c.seed = static_cast<std::uint64_t>(number);
    } else if (a == "--clock-sync") {
      c.clock_sync = v;
    } else if (a == "--csv") {
      c.csv_path = v;
    } else if (a == "--raw") {
      c.raw_path = v;
    } else {
      r.error = "unknown option '" + a + "'";
      return r;
    }
  }
  return r;
}

} // namespace htrace::bench
