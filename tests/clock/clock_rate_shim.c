/* LD_PRELOAD test shim: makes CLOCK_MONOTONIC(_RAW) really run fast or slow, per emulated node,
 * and optionally shifts single ranks' clocks. Time namespaces only shift clocks; drift handling
 * needs a clock whose rate differs.
 *   HTRACE_TEST_CLOCK_RATES="0,1e-4,-5e-5"   rate error of node i (host name htnode<i>):
 *                                             reading = t + rate * t
 *   HTRACE_TEST_CLOCK_RATE_STEPS=",T:R"          node i's rate becomes R once its clock t
 *                                             (the namespace's) passes T ns; empty: no step.
 *                                             reading = t + rate * t + (R - rate) * (t - T)
 *                                             for t > T: continuous, a kink at T
 *   HTRACE_TEST_CLOCK_RANK_OFFSETS="0,0,0,1000000"  extra ns for world rank r
 * (OMPI_COMM_WORLD_RANK from Open MPI's mpirun, PMI_RANK from MPICH's hydra). Every process that
 * loads it reads the same scaled clock for a given node, as a shared hardware clock with a
 * frequency error would look. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec*);

static clock_gettime_fn real_clock_gettime;
static double rate;
static int64_t step_at = INT64_MAX;
static double step_rate;
static int64_t extra_ns;
static int ready;

static const char* nth_item(const char* list, long n) {
  for (long i = 0; list && i < n; ++i) {
    list = strchr(list, ',');
    if (list) ++list;
  }
  return list;
}

static void setup(void) {
  real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const char* digits = strstr(host, "htnode");
  const long node = digits ? strtol(digits + 6, NULL, 10) : 0;
  const char* item = nth_item(getenv("HTRACE_TEST_CLOCK_RATES"), node);
  rate = item ? strtod(item, NULL) : 0.0;
  item = nth_item(getenv("HTRACE_TEST_CLOCK_RATE_STEPS"), node);
  if (item && *item && *item != ',') {
    char* end = NULL;
    const long long at = strtoll(item, &end, 10);
    if (*end == ':') step_at = at, step_rate = strtod(end + 1, NULL);
  }
  const char* rank_text = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank_text) rank_text = getenv("PMI_RANK");
  item = rank_text ? nth_item(getenv("HTRACE_TEST_CLOCK_RANK_OFFSETS"), strtol(rank_text, NULL, 10))
                   : NULL;
  extra_ns = item ? strtoll(item, NULL, 10) : 0;
  ready = 1;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  if (!ready) setup();
  const int rc = real_clock_gettime(id, ts);
  if (rc != 0 || (id != CLOCK_MONOTONIC && id != CLOCK_MONOTONIC_RAW)) return rc;
  int64_t t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
  const int64_t since_step = t > step_at ? t - step_at : 0;
  t += (int64_t)(rate * (double)t) + (int64_t)((step_rate - rate) * (double)since_step) + extra_ns;
  ts->tv_sec = t / 1000000000;
  ts->tv_nsec = t % 1000000000;
  if (ts->tv_nsec < 0) ts->tv_nsec += 1000000000, ts->tv_sec -= 1;
  return 0;
}
