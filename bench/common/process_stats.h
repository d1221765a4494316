// Measurement helpers shared by the benchmarks of htrace-correct.
#ifndef HTRACE_BENCH_PROCESS_STATS_H
#define HTRACE_BENCH_PROCESS_STATS_H

#include <algorithm>
#include <sys/resource.h>
#include <vector>

namespace htrace::bench_stats {

// User plus system CPU time of this process so far.
inline double cpu_seconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Peak resident set size of this process so far.
inline long max_rss_kib() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// The middle value (the upper one of an even count); v must not be empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace htrace::bench_stats
#endif
