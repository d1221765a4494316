#include "output_file.h"

#include "format/error.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace htrace::score {

OutputFile::OutputFile(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  file_ = std::fopen(tmp_.c_str(), "wbx");
  if (!file_)
    throw output_error("'" + path_ + "': cannot be written (" + std::strerror(errno) + ")");
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
  if (!published_) std::remove(tmp_.c_str());
}

void OutputFile::write(const std::string& text) {
  const bool written = std::fwrite(text.data(), 1, text.size(), file_) == text.size() &&
                       std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int error = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!written || !closed)
    throw output_error("'" + path_ + "': write failed (" + std::strerror(written ? errno : error) +
                       ")");
  written_ = true;
}

void OutputFile::publish() {
  if (!written_ || std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw output_error("'" + path_ + "': cannot be written (" + std::strerror(errno) + ")");
  published_ = true;
}

} // namespace htrace::score
