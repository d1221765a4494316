// An open file descriptor, closed when destroyed; and reading so many bytes from one.
#ifndef HTRACE_FORMAT_FILE_DESCRIPTOR_H
#define HTRACE_FORMAT_FILE_DESCRIPTOR_H

#include <cstddef>
#include <cstdint>
#include <sys/types.h>
#include <utility>

namespace htrace::format {

class FileDescriptor {
public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& o) noexcept;
  ~FileDescriptor();
  int get() const { return fd_; }
  /// The descriptor, now the caller's to close; -1 if none.
  int release() { return std::exchange(fd_, -1); }

private:
  int fd_ = -1;
};

// Reads `n` bytes of `fd` from offset `at` into `to` (again where a signal interrupts); false,
// with errno set, on an error or where the file ends first (EIO: truncated meanwhile).
bool read_exactly(int fd, uint8_t* to, size_t n, size_t at);

// Reads up to `n` bytes (at most 1 GiB) of regular file `fd` from offset `at` into `to`, in one
// read: the number read, or -1 with errno set on an error. Linux reads a regular file short only
// where it ends (signals other than fatal ones do not interrupt it), so a short read tells the
// file's size without a stat.
ssize_t read_up_to(int fd, uint8_t* to, size_t n, size_t at);

} // namespace htrace::format
#endif
