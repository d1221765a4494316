#include "common/log.h"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace htrace::log {
namespace {

std::atomic<int> g_verbosity{1};
std::atomic<int> g_rank{-1};
std::atomic<int> g_file{-1};

void emit(const char* level, bool to_stderr, const char* format, va_list args) {
  char line[1024];
  int n = g_rank.load() >= 0
              ? std::snprintf(line, sizeof line, "htrace[%d]: %s: ", g_rank.load(), level)
              : std::snprintf(line, sizeof line, "htrace: %s: ", level);
  if (n < 0) return;
  int m = std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), format, args);
  if (m < 0) return;
  size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  // One write(2) so lines from different ranks and threads do not interleave.
  ssize_t ignored = to_stderr ? ::write(STDERR_FILENO, line, len) : 0;
  const int file = g_file.load();
  if (file >= 0) ignored = ::write(file, line, len);
  (void)ignored;
}

} // namespace

void configure(int verbosity) {
  g_verbosity = verbosity;
}
void set_rank(int world_rank) {
  g_rank = world_rank;
}
void set_file(const char* path) {
  if (!path || !*path) return;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    error("HTRACE_LOG_FILE '%s': %s; diagnostics go to stderr only", path, std::strerror(errno));
    return;
  }
  // Far from the low numbers an application reuses after closing descriptors it did not open, so
  // that htrace's lines never land in the application's own file (kept low if the limit is low).
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 512);
  if (high >= 0) {
    ::close(fd);
    fd = high;
  }
  const int old = g_file.exchange(fd);
  if (old >= 0) ::close(old);
}
bool enabled(Level level) {
  return static_cast<int>(level) <= g_verbosity.load();
}

#define HTRACE_LOG_FUNCTION(name, level, label)                                                    \
  void name(const char* format, ...) {                                                             \
    if (!enabled(level)) return;                                                                   \
    va_list args;                                                                                  \
    va_start(args, format);                                                                        \
    emit(label, true, format, args);                                                               \
    va_end(args);                                                                                  \
  }
HTRACE_LOG_FUNCTION(error, Level::Error, "error")
HTRACE_LOG_FUNCTION(warning, Level::Warning, "warning")
HTRACE_LOG_FUNCTION(info, Level::Info, "info")
HTRACE_LOG_FUNCTION(debug, Level::Debug, "debug")
#undef HTRACE_LOG_FUNCTION

void rank_warning(const char* format, ...) {
  if (!enabled(Level::Warning)) return;
  const bool to_stderr = g_rank.load() < kRanksWarningOnStderr || enabled(Level::Debug);
  if (!to_stderr && g_file.load() < 0) return;
  va_list args;
  va_start(args, format);
  emit("warning", to_stderr, format, args);
  va_end(args);
}

} // namespace htrace::log
