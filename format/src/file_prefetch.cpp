#include "format/file_prefetch.h"

#include <fcntl.h>
#include <unistd.h>

namespace htrace::format {

FilePrefetch::FilePrefetch(std::vector<std::string> paths, std::size_t depth)
    : paths_(std::move(paths)),
      ahead_(paths_.size(), depth, [this](std::size_t i) { return open(i); }) {}

// Any failure leaves the file unopened: the reader's own open then reports it.
std::optional<MappedFile> FilePrefetch::open(std::size_t i) const {
  if (paths_[i].empty()) return std::nullopt;
  try {
    return std::optional<MappedFile>(std::in_place, paths_[i], MappedFile::kSmallFile);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

MappedFile FilePrefetch::take(std::size_t i) {
  std::optional<MappedFile> file = ahead_.take(i);
  if (file) return std::move(*file);
  return MappedFile(paths_[i], MappedFile::kSmallFile);
}

FileCreateAhead::FileCreateAhead(std::vector<std::string> paths, std::size_t depth)
    : paths_(std::move(paths)), ahead_(paths_.size(), depth, [this](std::size_t i) {
        return FileDescriptor(
            paths_[i].empty()
                ? -1
                : ::open(paths_[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      }) {}

} // namespace htrace::format
