#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What `f` writes on stderr, and what it appends to the log file.
struct Written {
  std::string on_stderr, in_file;
};

template <class F> Written capture(F&& f) {
  char err_path[] = "/tmp/htrace-log-test-XXXXXX";
  const int err = ::mkstemp(err_path);
  char file_path[] = "/tmp/htrace-log-file-XXXXXX";
  const int file = ::mkstemp(file_path);
  ::close(file);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(err, STDERR_FILENO);
  htrace::log::set_file(file_path);
  f();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(err);
  Written w{read_file(err_path), read_file(file_path)};
  ::unlink(err_path);
  ::unlink(file_path);
  return w;
}

TEST(Log, AWarningEveryRankMayGiveIsOnStderrFromTheFirstRanksOnlyAndInTheFileFromEvery) {
  htrace::log::configure(1);
  htrace::log::set_rank(htrace::log::kRanksWarningOnStderr - 1);
  Written first = capture([] { htrace::log::rank_warning("budget %d", 1); });
  EXPECT_EQ(first.on_stderr, "htrace[7]: warning: budget 1\n");
  EXPECT_EQ(first.in_file, first.on_stderr);

  htrace::log::set_rank(htrace::log::kRanksWarningOnStderr);
  Written later = capture([] {
    htrace::log::rank_warning("budget %d", 2);
    htrace::log::warning("other %d", 3); // any other warning: every rank's
  });
  EXPECT_EQ(later.on_stderr, "htrace[8]: warning: other 3\n");
  EXPECT_EQ(later.in_file, "htrace[8]: warning: budget 2\nhtrace[8]: warning: other 3\n");

  htrace::log::configure(2); // debug: every rank's on stderr too
  Written debug = capture([] { htrace::log::rank_warning("budget %d", 4); });
  EXPECT_EQ(debug.on_stderr, "htrace[8]: warning: budget 4\n");

  htrace::log::configure(0); // errors only
  htrace::log::set_rank(0);
  Written quiet = capture([] { htrace::log::rank_warning("budget %d", 5); });
  EXPECT_EQ(quiet.on_stderr, "");
  EXPECT_EQ(quiet.in_file, "");

  htrace::log::configure(1);
  htrace::log::set_rank(-1); // before MPI_Init: the rank is not known
  Written early = capture([] { htrace::log::rank_warning("budget %d", 6); });
  EXPECT_EQ(early.on_stderr, "htrace: warning: budget 6\n");
}

} // namespace
