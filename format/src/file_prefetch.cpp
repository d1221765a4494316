#include "format/file_prefetch.h"

#include <cerrno>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace htrace::format {

FilePrefetch::FilePrefetch(std::vector<std::string> paths, std::size_t depth)
    : paths_(std::move(paths)),
      ahead_(paths_.size(), depth, [this](std::size_t i) { return read(i); }) {}

// Any failure leaves the file unread: the reader's own open then reports it, with its path.
FilePrefetch::File FilePrefetch::read(std::size_t i) const {
  File f;
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

MappedFile FilePrefetch::take(std::size_t i) {
  File f = ahead_.take(i);
  if (f.bytes) return MappedFile(std::move(f.bytes), f.size);
  return MappedFile(paths_[i], MappedFile::kSmallFile);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileCreateAhead::FileCreateAhead(std::vector<std::string> paths, std::size_t depth)
    : paths_(std::move(paths)), ahead_(paths_.size(), depth, [this](std::size_t i) {
        return FileDescriptor(
            paths_[i].empty()
                ? -1
                : ::open(paths_[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      }) {}

} // namespace htrace::format
