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
  for (size_t done = 0; done < n;) {
    const ssize_t got = ::pread(fd, to + done, n - done, static_cast<off_t>(at + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(got);
  }
  return true;
}

ssize_t read_up_to(int fd, uint8_t* to, size_t n, size_t at) {
  for (;;) {
    const ssize_t got = ::pread(fd, to, n, static_cast<off_t>(at));
    if (got >= 0 || errno != EINTR) return got;
  }
}

} // namespace htrace::format
