#include "format/file_copy.h"

#include "format/error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

namespace htrace::format {

bool copy_whole_file(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    if (errno == ENOENT) return false;
    throw input_error("'" + from + "': cannot open: " + std::strerror(errno));
  }
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int cause = out < 0 ? errno : 0;
  if (out >= 0) {
    ssize_t n;
    while ((n = ::sendfile(out, in, nullptr, 1 << 20)) > 0 || (n < 0 && errno == EINTR)) {
    }
    if (n < 0) cause = errno;
    // close() reports what a network or delayed-allocation file system could not write.
    if (::close(out) != 0 && cause == 0) cause = errno;
  }
  ::close(in);
  if (cause != 0)
    throw output_error("'" + to + "': cannot copy '" + from + "' there: " + std::strerror(cause));
  return true;
}

void write_whole_file(const std::string& to, std::string_view bytes) {
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int cause = out < 0 ? errno : 0;
  if (out >= 0) {
    for (size_t done = 0; done < bytes.size() && cause == 0;) {
      const ssize_t n = ::write(out, bytes.data() + done, bytes.size() - done);
      if (n > 0)
        done += static_cast<size_t>(n);
      else if (n == 0 || errno != EINTR)
        cause = n == 0 ? EIO : errno;
    }
    if (::close(out) != 0 && cause == 0) cause = errno;
  }
  if (cause != 0) throw output_error("'" + to + "': cannot write: " + std::strerror(cause));
}

} // namespace htrace::format
