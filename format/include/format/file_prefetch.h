// Opens the files a pass over an archive's locations will take next, in its order, on a
// background thread, so that their opens overlap the pass's work on the files before. A pass
// opens one file per location: at 16,384 locations each open is a system call's path walk (a few
// microseconds, more in a virtual machine; creating a file costs more) or, on a parallel file
// system, a round trip to its metadata server, which a pass that waits for each one pays in full.
//  - FilePrefetch reads the input files ahead;
//  - FileCreateAhead creates the output files ahead.
#ifndef HTRACE_FORMAT_FILE_PREFETCH_H
#define HTRACE_FORMAT_FILE_PREFETCH_H

#include "format/event_file.h"
#include "format/file_descriptor.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace htrace::format {

// Runs `make(i)` for i = 0 .. count - 1 on a thread of its own, at most `depth` results ahead of
// the consumer, which takes them by growing i (results passed over are dropped: T's destructor
// releases what they hold). The two sides wake each other only when needed (a system call each):
// the thread, once the consumer has taken half of what was ready; the consumer, when it waits.
template <class T> class Ahead {
public:
  Ahead(std::size_t count, std::size_t depth, std::function<T(std::size_t)> make)
      : count_(count), depth_(depth > 0 ? depth : 1), make_(std::move(make)),
        thread_([this] { run(); }) {}
  ~Ahead() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;

  /// Result i; i must grow from call to call.
  T take(std::size_t i) {
    if (i >= count_) throw std::out_of_range("Ahead::take: no item " + std::to_string(i));
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      while (!ready_.empty() && ready_.front().first < i)
        ready_.pop_front(); // passed over
      if (!ready_.empty()) break;
      if (thread_waits_) changed_.notify_all();
      consumer_waits_ = true;
      changed_.wait(lock);
      consumer_waits_ = false;
    }
    T item = std::move(ready_.front().second); // (front().first == i: the thread makes every i)
    ready_.pop_front();
    const bool wake = thread_waits_ && ready_.size() <= depth_ / 2;
    lock.unlock();
    if (wake) changed_.notify_all();
    return item;
  }

private:
  void run() {
    for (std::size_t i = 0; i < count_; ++i) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (ready_.size() >= depth_) {
          thread_waits_ = true;
          changed_.wait(lock, [&] { return stop_ || ready_.size() <= depth_ / 2; });
          thread_waits_ = false;
        }
        if (stop_) return;
      }
      T item = make_(i);
      bool wake;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.emplace_back(i, std::move(item));
        wake = consumer_waits_;
      }
      if (wake) changed_.notify_all();
    }
  }

  const std::size_t count_, depth_;
  const std::function<T(std::size_t)> make_; // must not throw
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::size_t, T>> ready_;
  bool stop_ = false;
  bool thread_waits_ = false;   // for room in ready_
  bool consumer_waits_ = false; // for the next item
  std::thread thread_;          // last: started once the rest exists
};

// Opens each file as MappedFile(path, MappedFile::kSmallFile) does (a file smaller than that read
// whole, a larger one mapped), at most `depth` files ahead.
class FilePrefetch {
public:
  /// An empty path stands for a file the reader will not take.
  explicit FilePrefetch(std::vector<std::string> paths, std::size_t depth = 16);

  /// File `i` of the list, as MappedFile(paths[i], MappedFile::kSmallFile) would give it; `i`
  /// must grow from call to call. A file the thread could not open is opened again here, which
  /// throws as MappedFile does, naming the path.
  MappedFile take(std::size_t i);

private:
  std::optional<MappedFile> open(std::size_t i) const;

  const std::vector<std::string> paths_;
  Ahead<std::optional<MappedFile>> ahead_; // last: its thread opens paths_
};

// Creates each file (write-only, truncated, mode 0644 before the umask) at most `depth` ahead.
class FileCreateAhead {
public:
  /// An empty path stands for a file the writer will not take.
  explicit FileCreateAhead(std::vector<std::string> paths, std::size_t depth = 16);

  /// File `i`'s descriptor, the caller's to close, or -1 if the thread could not create it (the
  /// caller then creates it itself, and reports why it cannot); `i` must grow from call to call.
  int take(std::size_t i) { return ahead_.take(i).release(); }

private:
  const std::vector<std::string> paths_;
  Ahead<FileDescriptor> ahead_; // last: its thread creates paths_
};

} // namespace htrace::format
#endif
