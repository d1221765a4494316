// Reads the files a reader will open next, in its order, on a background thread, so that their
// opens and reads overlap the reader's work on the files before. A reader of an archive opens one
// event file per location and pass: at 16,384 locations each open is a system call path walk (a
// few microseconds, more in a virtual machine) or, on a parallel file system, a round trip to its
// metadata server, which a reader that waits for each one pays in full.
#ifndef HTRACE_FORMAT_FILE_PREFETCH_H
#define HTRACE_FORMAT_FILE_PREFETCH_H

#include "format/event_file.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace htrace::format {

class FilePrefetch {
public:
  /// Starts reading `paths` in order: each file smaller than MappedFile::kSmallFile whole, at most
  /// `depth` files ahead of the reader. An empty path stands for a file the reader will not take.
  explicit FilePrefetch(std::vector<std::string> paths, std::size_t depth = 16);
  /// Stops the thread (it finishes at most the file it is reading).
  ~FilePrefetch();
  FilePrefetch(const FilePrefetch&) = delete;
  FilePrefetch& operator=(const FilePrefetch&) = delete;

  /// File `i` of the list, as MappedFile(paths[i], MappedFile::kSmallFile) would give it; `i`
  /// must grow from call to call (files passed over are dropped). A file the thread did not read
  /// (larger, or one it could not open or read) is opened here, which throws as MappedFile does.
  MappedFile take(std::size_t i);

private:
  struct File {
    std::size_t index = 0;
    std::unique_ptr<uint8_t[]> bytes; // nullptr: not read
    std::size_t size = 0;
  };
  void run();
  File read(std::size_t i) const;

  const std::vector<std::string> paths_;
  const std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<File> ready_; // read ahead, in order
  bool stop_ = false;
  bool thread_waits_ = false; // for room in ready_
  bool reader_waits_ = false; // for the next file
  std::thread thread_;        // last: started once the rest exists
};

} // namespace htrace::format
#endif
