#include "format/file_descriptor.h"

#include <cerrno>
#include <sys/types.h>
#include <unistd.h>

namespace htrace::format {

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

bool read_exactly(int fd, uint8_t* to, size_t n, size_t at) {
  const ssize_t got = read_up_to(fd, to, n, at);
  if (got >= 0 && static_cast<size_t>(got) < n) errno = EIO;
  return got >= 0 && static_cast<size_t>(got) == n;
}

ssize_t read_up_to(int fd, uint8_t* to, size_t n, size_t at) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, to + done, n - done, static_cast<off_t>(at + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

} // namespace htrace::format
