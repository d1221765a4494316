// A bounded window onto one file, read with pread and refilled by opening the file again: a reader
// of thousands of files at once (event_merge.h) holds neither a descriptor nor a mapping for each
// (`ulimit -n`, vm.max_map_count), and no more memory than its window. A file no larger than the
// window is read whole, into just the room it needs.
#ifndef HTRACE_FORMAT_FILE_WINDOW_H
#define HTRACE_FORMAT_FILE_WINDOW_H

#include "format/copy_arena.h"
#include "format/file_descriptor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace htrace::format {

class FileWindow {
public:
  // The first bytes of file `name` in the directory open as `dir` (`dir_path` names it in errors
  // and must outlive this), up to `capacity` of them, in room from `arena` (which must outlive
  // this). Throws an input Error naming the file.
  FileWindow(int dir, const std::string& dir_path, std::string name, size_t capacity,
             CopyArena& arena);
  ~FileWindow();
  FileWindow(FileWindow&& o) noexcept; // (the bytes stay where they are)
  FileWindow(const FileWindow&) = delete;
  FileWindow& operator=(const FileWindow&) = delete;

  const uint8_t* data() const { return room_; }
  size_t offset() const { return offset_; } // of data()[0] in the file
  size_t loaded() const { return loaded_; }
  size_t size() const { return size_; } // the file's, when it was opened
  // Moves the window to start at file offset `from` (at or after offset()), keeping what it
  // holds from there and reading as much after that as fits; the room doubles when it would take
  // nothing more. Throws as the constructor.
  void slide(size_t from);

private:
  FileDescriptor open() const;
  // Reads `n` bytes from file offset `at` into `to`.
  void read(const FileDescriptor& fd, uint8_t* to, size_t at, size_t n) const;
  // "'path': what: strerror(errno)".
  std::string io_error(const char* what) const;
  int dir_;
  const std::string* dir_path_;
  std::string name_;
  uint8_t* room_ = nullptr;
  size_t capacity_ = 0, offset_ = 0, loaded_ = 0, size_ = 0;
  CopyArena* arena_ = nullptr; // the room is in its slab `slab_`, or else in grown_
  uint32_t slab_ = 0;
  std::unique_ptr<uint8_t[]> grown_;
};

} // namespace htrace::format
#endif
