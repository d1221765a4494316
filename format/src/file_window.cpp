#include "format/file_window.h"

#include "format/error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace htrace::format {

FileWindow::FileWindow(int dir, const std::string& dir_path, std::string name, size_t capacity,
                       CopyArena& arena)
    : dir_(dir), dir_path_(&dir_path), name_(std::move(name)) {
  const FileDescriptor fd = open();
  // A file that fits is read whole, its size told by the short read; only a larger one is
  // stat'ed. Either keeps just the room it needs.
  capacity_ = std::clamp<size_t>(capacity, 1, CopyArena::kSlab);
  room_ = arena.take(capacity_, &slab_);
  arena_ = &arena;
  try {
    const ssize_t got = read_up_to(fd.get(), room_, capacity_, 0);
    if (got < 0) throw input_error(io_error("cannot read"));
    if (static_cast<size_t>(got) < capacity_) {
      size_ = static_cast<size_t>(got);
      const size_t needed = std::max<size_t>(size_, 1);
      arena.shrink_last(capacity_, needed);
      capacity_ = needed;
    } else {
      struct stat st {};
      if (::fstat(fd.get(), &st) != 0) throw input_error(io_error("cannot stat"));
      // (At least what was read: the file may have shrunk since.)
      size_ = std::max(static_cast<size_t>(st.st_size), capacity_);
    }
  } catch (...) {
    arena.release(slab_);
    throw;
  }
  loaded_ = std::min(size_, capacity_);
}

FileWindow::FileWindow(FileWindow&& o) noexcept
    : dir_(o.dir_), dir_path_(o.dir_path_), name_(std::move(o.name_)), room_(o.room_),
      capacity_(o.capacity_), offset_(o.offset_), loaded_(o.loaded_), size_(o.size_),
      arena_(std::exchange(o.arena_, nullptr)), slab_(o.slab_), grown_(std::move(o.grown_)) {}

FileWindow::~FileWindow() {
  if (arena_) arena_->release(slab_);
}

void FileWindow::slide(size_t from) {
  const size_t end = offset_ + loaded_;
  const size_t keep = end - std::min(from, end);
  if (keep >= capacity_) {
    // A record longer than the room: twice as much, off the arena.
    auto grown = std::make_unique<uint8_t[]>(2 * capacity_);
    std::memcpy(grown.get(), room_ + (from - offset_), keep);
    if (arena_) arena_->release(std::exchange(slab_, 0));
    arena_ = nullptr;
    grown_ = std::move(grown);
    room_ = grown_.get();
    capacity_ *= 2;
  } else if (keep > 0) {
    std::memmove(room_, room_ + (from - offset_), keep);
  }
  offset_ = from;
  const size_t more = std::min(capacity_ - keep, size_ - std::min(size_, from + keep));
  if (more > 0) read(open(), room_ + keep, from + keep, more);
  loaded_ = keep + more;
}

FileDescriptor FileWindow::open() const {
  FileDescriptor fd(::openat(dir_, name_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw input_error(io_error("cannot open"));
  return fd;
}

void FileWindow::read(const FileDescriptor& fd, uint8_t* to, size_t at, size_t n) const {
  if (!read_exactly(fd.get(), to, n, at)) throw input_error(io_error("cannot read"));
}

std::string FileWindow::io_error(const char* what) const {
  return "'" + *dir_path_ + "/" + name_ + "': " + what + ": " + std::strerror(errno);
}

} // namespace htrace::format
