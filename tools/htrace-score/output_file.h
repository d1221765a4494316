// A file htrace-score writes (its report, the Score-P filter file): created under a temporary
// name next to it when the run starts, so that an unwritable place fails before the archive is
// read, and renamed over the path only once complete. A run that fails leaves nothing behind.
#pragma once

#include <cstdio>
#include <string>

namespace htrace::score {

class OutputFile {
public:
  /// Throws an output Error (format/error.h) naming `path` if the file cannot be created.
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  /// Writes `text`, syncs and renames the file into place; throws an output Error on failure.
  void commit(const std::string& text);

private:
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
};

} // namespace htrace::score
