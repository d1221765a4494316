#include "format/file_prefetch.h"

#include <cerrno>
#include <fcntl.h>
#include <new>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace htrace::format {

FilePrefetch::FilePrefetch(std::vector<std::string> paths, std::size_t depth)
    : paths_(std::move(paths)), depth_(depth > 0 ? depth : 1), thread_([this] { run(); }) {}

FilePrefetch::~FilePrefetch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

// Any failure leaves the file unread: the reader's own open then reports it, with its path.
FilePrefetch::File FilePrefetch::read(std::size_t i) const {
  File f;
  f.index = i;
  if (paths_[i].empty()) return f;
  const int fd = ::open(paths_[i].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return f;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0 &&
      static_cast<std::size_t>(st.st_size) < MappedFile::kSmallFile) {
    const auto size = static_cast<std::size_t>(st.st_size);
    std::unique_ptr<uint8_t[]> bytes(new (std::nothrow) uint8_t[size]);
    std::size_t done = 0;
    while (bytes && done < size) {
      const ssize_t n = ::pread(fd, bytes.get() + done, size - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (done == size) f.bytes = std::move(bytes), f.size = size;
  }
  ::close(fd);
  return f;
}

// The two sides wake each other only when needed (a system call each): the thread, once the
// reader has taken half of what was ready; the reader, when it waits for the file read next.
void FilePrefetch::run() {
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (ready_.size() >= depth_) {
        thread_waits_ = true;
        changed_.wait(lock, [&] { return stop_ || ready_.size() <= depth_ / 2; });
        thread_waits_ = false;
      }
      if (stop_) return;
    }
    File f = read(i);
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(f));
      wake = reader_waits_;
    }
    if (wake) changed_.notify_all();
  }
}

MappedFile FilePrefetch::take(std::size_t i) {
  if (i >= paths_.size())
    throw std::out_of_range("FilePrefetch::take: no file " + std::to_string(i));
  File f;
  bool wake;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      while (!ready_.empty() && ready_.front().index < i)
        ready_.pop_front(); // passed over
      if (!ready_.empty()) break;
      if (thread_waits_) changed_.notify_all();
      reader_waits_ = true;
      changed_.wait(lock);
      reader_waits_ = false;
    }
    if (ready_.front().index == i) {
      f = std::move(ready_.front());
      ready_.pop_front();
    }
    wake = thread_waits_ && ready_.size() <= depth_ / 2;
  }
  if (wake) changed_.notify_all();
  if (f.bytes) return MappedFile(std::move(f.bytes), f.size);
  return MappedFile(paths_.at(i), MappedFile::kSmallFile);
}

} // namespace htrace::format
