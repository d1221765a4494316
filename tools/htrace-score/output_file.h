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
  /// Writes `text` to the temporary file and syncs it; throws an output Error on failure.
  void write(const std::string& text);
  /// Renames the written file into place (after write(): every output is whole before any
  /// appears); throws an output Error on failure.
  void publish();

private:
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
  bool written_ = false, published_ = false;
};

} // namespace htrace::score
