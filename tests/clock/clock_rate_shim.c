/* LD_PRELOAD test shim: makes CLOCK_MONOTONIC(_RAW) really run fast or slow, per emulated node,
 * and optionally shifts single ranks' clocks. Time namespaces only shift clocks; drift handling
 * needs a clock whose rate differs.
 *   HTRACE_TEST_CLOCK_RATES="0,1e-4,-5e-5"   rate error of node i (host name htnode<i>):
 *                                             reading = t + rate * t
 *   HTRACE_TEST_CLOCK_RATE_STEPS=",T:R[:D]"      node i's rate changes to R once its clock t
 *                                             (the namespace's) passes T ns: at once (a step,
 *                                             D 0 or left out) or linearly over D ns (a ramp);
 *                                             empty: no change. reading = t + rate * t
 *                                             + (R - rate) * g(t), g the integral of the
 *                                             change's progress, 0 before T to 1 after T + D:
 *                                             g = (t - T)^2 / 2D during the ramp, then
 *                                             t - T - D / 2. Continuous in t: no jump.
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
static int64_t change_at = INT64_MAX;
static int64_t change_ns; /* 0: a step */
static double new_rate;
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
    if (*end == ':') {
      change_at = at;
      new_rate = strtod(end + 1, &end);
      if (*end == ':') change_ns = strtoll(end + 1, NULL, 10);
    }
  }
  const char* rank_text = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank_text) rank_text = getenv("PMI_RANK");
  item = rank_text ? nth_item(getenv("HTRACE_TEST_CLOCK_RANK_OFFSETS"), strtol(rank_text, NULL, 10))
                   : NULL;
  extra_ns = item ? strtoll(item, NULL, 10) : 0;
  ready = 1;
}

/* g(t) of the rate change, in ns: how far the clock has run at the new rate instead of the old. */
static double changed_ns(int64_t t) {
  if (t <= change_at) return 0.0;
  const double since = (double)(t - change_at);
  if (since >= (double)change_ns) return since - 0.5 * (double)change_ns;
  return since * since / (2.0 * (double)change_ns);
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  if (!ready) setup();
  const int rc = real_clock_gettime(id, ts);
  if (rc != 0 || (id != CLOCK_MONOTONIC && id != CLOCK_MONOTONIC_RAW)) return rc;
  int64_t t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
  t += (int64_t)(rate * (double)t + (new_rate - rate) * changed_ns(t)) + extra_ns;
  ts->tv_sec = t / 1000000000;
  ts->tv_nsec = t % 1000000000;
  if (ts->tv_nsec < 0) ts->tv_nsec += 1000000000, ts->tv_sec -= 1;
  return 0;
}
