// Times htrace-correct as a user runs it, as whole processes (start-up, MPI or not, reading,
// writing, exit), next to the engine called in-process and a plain OTF2 copy, alternating every
// side in each repetition. Usage:
//   correct_process_bench ARCHIVE_DIR WORK_DIR [REPEATS [NP]]
// NP (default 2) ranks under mpirun for the parallel sides; 0 leaves them out. With
// HTRACE_CORRECT_BASELINE=PATH another htrace-correct (an older build) runs alternately too.
// Never initializes MPI itself: a launcher's environment would mark its children as MPI ranks.
#include "correct/engine.h"
#include "format/anchor_file.h"
#include "plain_copy.h"
#include "process_stats.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <malloc.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using htrace::bench_stats::median;
namespace fs = std::filesystem;

struct Timing {
  double wall = 0, cpu = 0; // seconds; cpu: user + system of the process and its children
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double cpu_of(const struct rusage& ru) {
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Runs `args` (stdout and stderr to /dev/null) and waits for it; exits the bench if it fails.
Timing run_process(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) std::perror("fork"), std::exit(1);
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))
      _exit(126);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (wait4(pid, &status, 0, &ru) != pid) std::perror("wait4"), std::exit(1);
  Timing t{seconds_since(t0), cpu_of(ru)};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const std::string& a : args)
      line += " " + a;
    std::fprintf(stderr, "correct_process_bench: failed (status %d):%s\n", status, line.c_str());
    std::exit(1);
  }
  return t;
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string self_path() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).string();
}

struct Side {
  Side(std::string n, std::function<Timing()> f, int ref = -1)
      : name(std::move(n)), run(std::move(f)), reference(ref) {}
  std::string name;
  std::function<Timing()> run;
  int reference; // index of the side this one is compared with (-1: none)
  std::vector<double> wall, cpu;
};

void print(const std::vector<Side>& sides) {
  for (const Side& s : sides) {
    if (s.wall.empty()) continue;
    const auto [lo, hi] = std::minmax_element(s.wall.begin(), s.wall.end());
    std::printf("%-52s wall median %.3f s (%.3f-%.3f)  CPU median %.3f s", s.name.c_str(),
                median(s.wall), *lo, *hi, median(s.cpu));
    if (s.reference >= 0) {
      const Side& r = sides[static_cast<size_t>(s.reference)];
      std::vector<double> pairs;
      for (size_t i = 0; i < s.wall.size(); ++i)
        pairs.push_back(s.wall[i] / r.wall[i]);
      std::printf("  vs %s: %.2fx (pairs %.2fx, CPU %.2fx)", r.name.c_str(),
                  median(s.wall) / median(r.wall), median(pairs), median(s.cpu) / median(r.cpu));
    }
    std::printf("\n");
  }
}

} // namespace

int main(int argc, char** argv) {
  // As correct_bench: every in-process repetition pays its own page faults.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  if (argc == 4 && std::string(argv[1]) == "--copy") { // one whole-process serial copy
    htrace::correct::SerialRankGroup one;
    htrace::bench_copy::plain_copy(htrace::format::find_anchor(argv[2]), argv[3], one);
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: correct_process_bench ARCHIVE_DIR WORK_DIR [REPEATS [NP]]\n");
    return 2;
  }
  const std::string in = argv[1], work = argv[2];
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  const int np = argc > 4 ? std::atoi(argv[4]) : 2;
  const std::string correct = HTRACE_CORRECT_PATH, bench = CORRECT_BENCH_PATH;
  std::vector<std::string> mpirun;
  {
    std::istringstream words(HTRACE_BENCH_MPIRUN);
    for (std::string w; words >> w;)
      mpirun.push_back(w);
    mpirun.push_back("-np");
    mpirun.push_back(std::to_string(np));
  }
  const auto with_mpirun = [&](std::vector<std::string> args) {
    args.insert(args.begin(), mpirun.begin(), mpirun.end());
    return args;
  };
  fs::create_directories(work);
  const std::string out = work + "/out";
  const auto clear = [&] { fs::remove_all(out); };
  const std::string anchor = htrace::format::find_anchor(in);
  uint64_t events = 0;
  std::vector<double> read_s, replay_s, write_s;

  std::vector<Side> sides;
  const auto add = [&](std::string name, std::function<Timing()> run, int reference = -1) {
    sides.emplace_back(std::move(name), std::move(run), reference);
    return static_cast<int>(sides.size()) - 1;
  };
  const int copy = add("copy, in-process, serial", [&] {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = htrace::bench_stats::cpu_seconds();
    htrace::correct::SerialRankGroup one;
    htrace::bench_copy::plain_copy(anchor, out, one);
    return Timing{seconds_since(t0), htrace::bench_stats::cpu_seconds() - c0};
  });
  const auto engine = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = htrace::bench_stats::cpu_seconds();
    htrace::correct::SerialRankGroup one;
    htrace::correct::Options o;
    o.input = in, o.output = out;
    const htrace::correct::Report rep = htrace::correct::correct_archive(o, one);
    events = rep.events;
    read_s.push_back(rep.read_seconds), replay_s.push_back(rep.replay_seconds);
    write_s.push_back(rep.write_seconds);
    return Timing{seconds_since(t0), htrace::bench_stats::cpu_seconds() - c0};
  };
  add("engine, in-process, serial", engine, copy);
  const std::string self = self_path();
  const int copy_process = add("copy, whole process, serial", [&] {
    return run_process({self, "--copy", in, out});
  });
  // Another build's htrace-correct, alternated with this one's (e.g. before a change).
  const char* baseline = std::getenv("HTRACE_CORRECT_BASELINE");
  std::vector<std::pair<std::string, std::string>> tools{{"htrace-correct", correct}};
  if (baseline && *baseline) tools.emplace_back("baseline htrace-correct", baseline);
  for (const auto& [name, path] : tools) {
    const std::string tool = path;
    add(
        name + " IN OUT, serial",
        [&, tool] {
          return run_process({tool, "--no-progress", in, out});
        },
        copy_process);
    add(
        name + " --check IN, serial",
        [&, tool] {
          return run_process({tool, "--check", in});
        },
        copy_process);
  }
  if (np > 0) {
    const std::string p = " mpirun -np " + std::to_string(np);
    const int copy_np = add("copy (correct_bench)," + p, [&] {
      return run_process(with_mpirun({bench, in, work, "1", "copy"}));
    });
    for (const auto& [name, path] : tools) {
      const std::string tool = path;
      add(
          name + " IN OUT," + p,
          [&, tool] {
            return run_process(with_mpirun({tool, "--no-progress", in, out}));
          },
          copy_np);
      add(
          name + " --check IN," + p,
          [&, tool] {
            return run_process(with_mpirun({tool, "--check", in}));
          },
          copy_np);
    }
    add("launcher alone (true)," + p, [&] { return run_process(with_mpirun({"true"})); });
  }
  const std::string load_before = loadavg();
  for (int r = 0; r < repeats; ++r)
    for (Side& s : sides) {
      // Outputs are removed outside the timed region, right before each side (see README.md).
      clear();
      fs::remove_all(work + "/copy");
      const Timing t = s.run();
      s.wall.push_back(t.wall), s.cpu.push_back(t.cpu);
    }
  clear();
  fs::remove_all(work + "/copy");
  std::printf("archive %s, %llu events, %d repetitions; load average before %s, after %s\n",
              in.c_str(), static_cast<unsigned long long>(events), repeats, load_before.c_str(),
              loadavg().c_str());
  print(sides);
  std::printf("engine phases (medians): read %.3f s, replay %.3f s, write %.3f s\n", median(read_s),
              median(replay_s), median(write_s));
  return 0;
}
