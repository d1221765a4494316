// Times htrace-correct's engine against a plain OTF2 read+write copy of the same archive, in the
// same run, alternating the two. Usage:
//   [mpirun -np P] correct_bench ARCHIVE_DIR WORK_DIR [REPEATS [copy|correct]]
// The last argument runs only one of the two (for profilers); no ratio is printed then.
#include "correct/engine.h"
#include "correct/mpi_rank_group.h"
#include "format/anchor_file.h"
#include "plain_copy.h"
#include "process_stats.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <malloc.h>
#include <mpi.h>
#include <string>
#include <vector>

namespace {

using namespace htrace::bench_stats;
using namespace htrace::correct;
using namespace htrace::format;
using htrace::bench_copy::plain_copy;

// Lines the ranks up before a timed region.
void settle() {
  MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace

int main(int argc, char** argv) {
  // A fixed mmap threshold: glibc otherwise raises it after the first large free, and from then
  // on serves the next run's buffers from memory the previous run already touched, so each side's
  // time would depend on which ran before it. Fixed, every repetition pays its own page faults,
  // as a fresh htrace-correct process does.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0)
      std::fprintf(stderr, "usage: correct_bench ARCHIVE_DIR WORK_DIR [REPEATS [copy|correct]]\n");
    MPI_Finalize();
    return 2;
  }
  // 0 repeats: MPI start-up only, the baseline to subtract from a profile of one side.
  const int repeats = argc > 3 ? std::max(0, std::atoi(argv[3])) : 3;
  const std::string only = argc > 4 ? argv[4] : "";
  const bool run_copy = only != "correct", run_correct = only != "copy";
  if (!only.empty() && only != "copy" && only != "correct") {
    if (rank == 0) std::fprintf(stderr, "correct_bench: the last argument is copy or correct\n");
    MPI_Finalize();
    return 2;
  }
  std::string anchor = find_anchor(argv[1]), work = argv[2];
  MpiRankGroup world(MPI_COMM_WORLD);
  std::vector<double> copy_s, correct_s, copy_cpu, correct_cpu;
  std::vector<double> read_s, replay_s, write_s; // the correction's phases (rank 0)
  long copy_rss_kib = 0;
  Report rep;
  for (int r = 0; r < repeats; ++r) {
    // Old outputs are removed outside the timed regions (deleting a 100 MB archive is neither
    // copying nor correcting), and each right before its own side runs: on a VM whose balloon
    // hands freed pages back to the host after seconds, memory freed just before is cheap to
    // write into, and memory freed earlier costs a host fault per page on first touch (writing
    // 200 MB into the page cache: ~0.05 s or ~0.5 s of system time, measured orders of
    // magnitude). Removing both at once would give the side that runs first the cheap pages.
    const auto remove_output = [&](const char* name) {
      if (rank == 0) std::filesystem::remove_all(work + "/" + name);
      settle();
    };
    remove_output("copy");
    double t0 = MPI_Wtime(), c0 = cpu_seconds();
    if (run_copy) plain_copy(anchor, work + "/copy", world);
    double c1 = cpu_seconds();
    if (r == 0)
      copy_rss_kib = max_rss_kib(); // the copy runs first: its peak, before any correction
    MPI_Barrier(MPI_COMM_WORLD);
    const double copy_seconds = MPI_Wtime() - t0;
    remove_output("corrected");
    double t1 = MPI_Wtime();
    Options o;
    o.input = argv[1], o.output = work + "/corrected";
    double c2 = cpu_seconds();
    if (run_correct) {
      rep = correct_archive(o, MPI_COMM_WORLD);
      read_s.push_back(rep.read_seconds), replay_s.push_back(rep.replay_seconds);
      write_s.push_back(rep.write_seconds);
    }
    double c3 = cpu_seconds();
    copy_cpu.push_back(c1 - c0), correct_cpu.push_back(c3 - c2);
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    copy_s.push_back(copy_seconds), correct_s.push_back(t2 - t1);
  }
  long rss_kib = max_rss_kib(), max_rss = 0, max_copy_rss = 0;
  MPI_Reduce(&rss_kib, &max_rss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&copy_rss_kib, &max_copy_rss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0 && repeats > 0 && only.empty()) {
    double c = median(copy_s), k = median(correct_s);
    double ev = static_cast<double>(rep.events);
    std::printf("ranks %d  events %.0f  repeats %d\n", size, ev, repeats);
    const double cmin = *std::min_element(copy_s.begin(), copy_s.end()),
                 kmin = *std::min_element(correct_s.begin(), correct_s.end());
    std::printf("plain copy   median %.3f s  %.2f M events/s per process  (fastest %.3f s)\n", c,
                ev / c / size / 1e6, cmin);
    std::printf("correction   median %.3f s  %.2f M events/s per process  (fastest %.3f s)\n", k,
                ev / k / size / 1e6, kmin);
    // Each repetition's copy and correction run back to back, under the same machine load: the
    // median of their ratios is the steadiest figure on a shared machine.
    std::vector<double> pair_ratio;
    for (size_t i = 0; i < copy_s.size(); ++i)
      pair_ratio.push_back(correct_s[i] / copy_s[i]);
    std::printf("ratio        median %.2fx, fastest %.2fx, median of per-repetition ratios %.2fx\n",
                k / c, kmin / cmin, median(pair_ratio));
    std::printf("CPU time (rank 0, user+sys; less sensitive to machine load): copy %.3f s, "
                "correction %.3f s (%.2fx)\n",
                median(copy_cpu), median(correct_cpu), median(correct_cpu) / median(copy_cpu));
    std::printf(
        "correction phases (medians, rank 0 wall): read %.3f s, replay %.3f s, write %.3f s\n",
        median(read_s), median(replay_s), median(write_s));
    std::printf("violations before p2p %llu coll %llu, after %llu\n",
                (unsigned long long)rep.violations_before[0],
                (unsigned long long)rep.violations_before[1],
                (unsigned long long)(rep.violations_after[0] + rep.violations_after[1] +
                                     rep.violations_after[2]));
    const double per_process = ev / size;
    std::printf("peak RSS %.1f MiB per process, %.1f bytes per event; the copy's %.1f MiB, so the "
                "correction's own memory is %.1f bytes per event (events per process %.0f)\n",
                max_rss / 1024.0, max_rss * 1024.0 / per_process, max_copy_rss / 1024.0,
                (max_rss - max_copy_rss) * 1024.0 / per_process, per_process);
  } else if (rank == 0 && repeats > 0) { // one side only, for a profiler: its time is enough
    const std::vector<double>& t = run_copy ? copy_s : correct_s;
    std::printf("%s only: median %.3f s, fastest %.3f s over %d repetitions\n", only.c_str(),
                median(t), *std::min_element(t.begin(), t.end()), repeats);
    if (run_correct)
      std::printf("phases (medians, rank 0): read %.3f s, replay %.3f s, write %.3f s\n",
                  median(read_s), median(replay_s), median(write_s));
  }
  MPI_Finalize();
  return 0;
}
