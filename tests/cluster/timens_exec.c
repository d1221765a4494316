/* timens_exec HOST OFFSET_NS COMMAND...
 * Runs COMMAND in new UTS and time namespaces: host name HOST, CLOCK_MONOTONIC and CLOCK_BOOTTIME
 * shifted by OFFSET_NS nanoseconds (signed). unshare(1) takes whole seconds only; the emulated
 * cluster needs offsets from microseconds up. Exits with COMMAND's status. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static int fail(const char* what) {
  fprintf(stderr, "timens_exec: %s: %s\n", what, strerror(errno));
  return 126;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: timens_exec HOST OFFSET_NS COMMAND...\n");
    return 2;
  }
  char* end = NULL;
  const long long offset = strtoll(argv[2], &end, 10);
  if (*end != '\0') {
    fprintf(stderr, "timens_exec: offset '%s' is not an integer number of ns\n", argv[2]);
    return 2;
  }
  if (unshare(CLONE_NEWUTS | CLONE_NEWTIME) != 0) return fail("unshare");
  if (sethostname(argv[1], strlen(argv[1])) != 0) return fail("sethostname");

  /* Offsets are written as seconds plus non-negative nanoseconds. */
  long long sec = offset / 1000000000LL, nsec = offset % 1000000000LL;
  if (nsec < 0) nsec += 1000000000LL, sec -= 1;
  FILE* f = fopen("/proc/self/timens_offsets", "w");
  if (!f) return fail("open /proc/self/timens_offsets");
  fprintf(f, "monotonic %lld %lld\nboottime %lld %lld\n", sec, nsec, sec, nsec);
  if (fclose(f) != 0) return fail("write /proc/self/timens_offsets");

  /* The new time namespace applies to children only. */
  pid_t child = fork();
  if (child < 0) return fail("fork");
  if (child == 0) {
    execvp(argv[3], argv + 3);
    _exit(fail("exec"));
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return fail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
