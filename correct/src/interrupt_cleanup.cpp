#include "correct/interrupt_cleanup.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace htrace::correct {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kMaxDepth = 3;
constexpr int kMaxAttempts = 1000;

// The path lives in a fixed buffer: the handler may not allocate. `g_armed` says whether it holds
// a directory to remove; it is cleared before the buffer is rewritten.
char g_dir[4096];
std::atomic<bool> g_armed{false};
std::atomic<bool> g_installed{false};

// Removes everything inside the open directory `fd`; subdirectories up to `depth` levels. Only
// system calls (getdents64, unlinkat, openat), so it is safe in a signal handler. Entries removed
// while reading shift the directory stream, so it reads from the start until a pass removes
// nothing.
void remove_contents(int fd, int depth) {
  alignas(8) char buf[8192];
  for (bool removed = true; removed;) {
    removed = false;
    if (::lseek(fd, 0, SEEK_SET) != 0) return;
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* entry = reinterpret_cast<const struct dirent64*>(buf + off);
        off += entry->d_reclen;
        const char* name = entry->d_name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        if (::unlinkat(fd, name, 0) == 0) {
          removed = true;
          continue;
        }
        if (errno != EISDIR || depth <= 0) continue;
        const int sub = ::openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        remove_contents(sub, depth - 1);
        ::close(sub);
        if (::unlinkat(fd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
  }
}

// Removes the tree `dir`. Threads that create its files ahead (format/file_prefetch.h) run on
// while this one removes them, so it tries again until the directory itself is gone: then they
// can create nothing more in it.
void remove_tree(const char* dir) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    remove_contents(fd, kMaxDepth);
    ::close(fd);
    if (::rmdir(dir) == 0 || errno == ENOENT) return;
  }
}

void on_interrupt(int sig) {
  const int saved_errno = errno;
  if (g_armed.exchange(false)) remove_tree(g_dir);
  // End the process by the same signal, so the parent (shell, mpirun, batch system) sees it.
  std::signal(sig, SIG_DFL);
  errno = saved_errno;
  ::raise(sig);
}

sigset_t interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kSignals)
    sigaddset(&set, sig);
  return set;
}

void install_handlers() {
  if (g_installed.exchange(true)) return;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  action.sa_mask = interrupt_signals(); // one cleanup at a time
  for (int sig : kSignals) {
    struct sigaction previous {};
    // An interrupt the caller chose to ignore (nohup, a batch wrapper) stays ignored.
    if (::sigaction(sig, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &action, nullptr);
  }
}

} // namespace

void remove_on_interrupt(const std::string& dir) {
  g_armed.store(false);
  if (dir.empty() || dir.size() >= sizeof g_dir) return; // too long to keep: nothing is armed
  std::memcpy(g_dir, dir.c_str(), dir.size() + 1);
  install_handlers();
  g_armed.store(true);
}

void forget_on_interrupt() {
  g_armed.store(false);
}

BlockedSignals interrupts_stay_on_this_thread() {
  return BlockedSignals(interrupt_signals());
}

} // namespace htrace::correct
