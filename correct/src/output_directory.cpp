#include "correct/output_directory.h"

#include "correct/exchange.h"
#include "correct/interrupt_cleanup.h"
#include "format/output_path.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdio.h>
#include <sys/utsname.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace htrace::correct {

namespace {
// Files per rank above which the output's file system is synced as a whole instead of file by
// file: one cache flush of the device, where an fsync of each file flushes it once per file (most
// of the run's time for thousands of locations on a disk; on tmpfs 6 system calls per location).
// It may write other programs' data on that file system too, hence not for a few files.
constexpr std::size_t kSyncfsAbove = 64;

// fsync of a directory, so that the names in it (a rename, new files) are durable too.
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd); // best effort: some file systems refuse fsync of a directory
  ::close(fd);
}

// Whether syncfs() reports the write errors of its file system since the descriptor was opened
// (Linux 5.8 and later); before that it returned 0 whatever happened.
bool syncfs_reports_errors() {
  struct utsname u {};
  int major = 0, minor = 0;
  return ::uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
         (major > 5 || (major == 5 && minor >= 8));
}

// Every rank syncs its share of the files under `dir` (the k-th file in a sorted walk belongs to
// rank k mod size), so P ranks sync in parallel; rank 0 also syncs the directories. Returns the
// first failure ("" if none), naming the file: a full disk can surface only here.
std::string sync_each_file(const std::string& dir, int rank, int size) {
  std::vector<fs::path> files, dirs{fs::path(dir)};
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec))
      dirs.push_back(it->path());
    else if (it->is_regular_file(ec))
      files.push_back(it->path());
  }
  if (ec) return "'" + dir + "': cannot list the finished archive: " + ec.message();
  std::sort(files.begin(), files.end());
  for (std::size_t i = static_cast<std::size_t>(rank); i < files.size();
       i += static_cast<std::size_t>(size)) {
    const int fd = ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      const std::string cause = std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return "'" + files[i].string() + "': cannot write to disk: " + cause;
    }
    ::close(fd);
  }
  if (rank == 0)
    for (const auto& d : dirs)
      sync_directory(d.string());
  return "";
}

fs::path output_path(const Options& o) {
  return format::output_path(o.output);
}
} // namespace

TempOutput prepare_output(const Options& o, RankGroup& ranks) {
  const int rank = ranks.rank();
  std::error_code ec;
  const fs::path out = output_path(o);
  if (fs::exists(out, ec) && !o.force)
    throw output_error("'" + o.output + "': output exists (use --force to replace it)");
  fs::path in = fs::absolute(fs::path(o.input)).lexically_normal();
  if (fs::is_regular_file(in, ec)) in = in.parent_path();
  if (fs::exists(out, ec) && fs::equivalent(in, out, ec))
    throw output_error("'" + o.output + "': output is the input archive");
  format::check_output_parent(out, o.output);
  long pid = rank == 0 ? static_cast<long>(getpid()) : 0;
  ranks.broadcast(&pid, sizeof pid, 0);
  return TempOutput((out.parent_path() /
                     ("." + out.filename().string() + ".htrace-correct-" + std::to_string(pid)))
                        .string(),
                    ranks);
}

TempOutput::TempOutput(std::string dir, RankGroup& ranks) : dir_(std::move(dir)), ranks_(&ranks) {
  remove_on_interrupt(dir_);
  // Opened before any output is written: syncfs() reports the errors since this open.
  const std::string parent = fs::path(dir_).parent_path().string();
  file_system_ = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

TempOutput& TempOutput::operator=(TempOutput&& o) noexcept {
  if (this != &o) {
    remove();
    dir_ = std::exchange(o.dir_, std::string());
    name_ = o.name_;
    ranks_ = std::exchange(o.ranks_, nullptr);
    if (file_system_ >= 0) ::close(file_system_);
    file_system_ = std::exchange(o.file_system_, -1);
  }
  return *this;
}

TempOutput::~TempOutput() {
  remove();
  if (file_system_ >= 0) ::close(file_system_);
}

std::string TempOutput::sync(std::size_t files) {
  const int rank = ranks_->rank(), size = ranks_->size();
  if (files / static_cast<std::size_t>(size) <= kSyncfsAbove || file_system_ < 0 ||
      !syncfs_reports_errors())
    return sync_each_file(dir_, rank, size);
  if (rank != 0 || ::syncfs(file_system_) == 0) return "";
  // A write error on that file system since the correction began: name the file if it is ours.
  const std::string cause = std::strerror(errno);
  const std::string file = sync_each_file(dir_, 0, 1);
  return !file.empty() ? file : "'" + dir_ + "': cannot write to disk: " + cause;
}

void TempOutput::remove() {
  if (dir_.empty() || !ranks_) return;
  const int rank = ranks_->rank();
  // Every rank must be done with its files first (after an error raised together; a rank-local
  // one aborts the job anyway).
  if (may_clean_up_together()) ranks_->barrier();
  if (rank == 0) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (ec)
      std::fprintf(stderr, "htrace-correct: warning: '%s': cannot remove: %s\n", dir_.c_str(),
                   ec.message().c_str());
  }
  forget_on_interrupt();
  dir_.clear();
}

void TempOutput::commit(const Options& o, std::size_t files) {
  const int rank = ranks_->rank();
  ranks_->barrier(); // every rank's files are closed
  // A rename is only as durable as the data it points at: without this, a crash shortly after
  // could leave OUT in place with empty files.
  std::string error = sync(files);
  check_together(*ranks_, error, 0, ErrorKind::Output);
  if (rank == 0) {
    const fs::path target = output_path(o);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(target, ec))) {
      if (::rename(dir_.c_str(), target.c_str()) != 0)
        error = "'" + o.output +
                "': cannot rename the finished archive into place: " + std::strerror(errno);
      else
        dir_.clear(); // committed
    } else if (::renameat2(AT_FDCWD, dir_.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) ==
               0) {
      // --force: OUT was never missing; dir_ now holds the old archive, removed below.
    } else if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
      error = "'" + o.output + "': cannot replace: " + std::strerror(errno);
    } else {
      // A file system without RENAME_EXCHANGE: move the old OUT aside, rename the new one into
      // place, and put the old one back if that fails.
      const std::string aside = dir_ + "-old";
      if (::rename(target.c_str(), aside.c_str()) != 0) {
        error = "'" + o.output + "': cannot replace: " + std::strerror(errno);
      } else if (::rename(dir_.c_str(), target.c_str()) != 0) {
        error = "'" + o.output +
                "': cannot rename the finished archive into place: " + std::strerror(errno);
        if (::rename(aside.c_str(), target.c_str()) != 0)
          error += "; the previous OUT is kept as '" + aside + "'";
      } else {
        dir_ = aside; // the old archive, removed below
      }
    }
  }
  if (rank == 0 && error.empty())
    sync_directory(output_path(o).parent_path().string()); // the rename
  check_together(*ranks_, error, 0, ErrorKind::Output);
  if (rank == 0 && !dir_.empty()) {
    // The old OUT of --force: the new archive is in place, so a failure here only leaves it.
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (ec)
      std::fprintf(stderr,
                   "htrace-correct: warning: '%s': cannot remove the replaced archive: %s\n",
                   dir_.c_str(), ec.message().c_str());
  }
  forget_on_interrupt();
  dir_.clear();
}

} // namespace htrace::correct
