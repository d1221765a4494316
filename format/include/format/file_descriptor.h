// An open file descriptor, closed when destroyed.
#ifndef HTRACE_FORMAT_FILE_DESCRIPTOR_H
#define HTRACE_FORMAT_FILE_DESCRIPTOR_H

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

} // namespace htrace::format
#endif
