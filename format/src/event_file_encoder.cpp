#include "format/event_file_encoder.h"

#include <fcntl.h>
#include <new>
#include <unistd.h>

namespace htrace::format {

EventFileEncoder::~EventFileEncoder() {
  if (fd_ >= 0) ::close(fd_);
}

bool EventFileEncoder::open(const std::string& path, std::size_t chunk_size, void (*before_write)(),
                            int created) {
  path_ = path;
  before_write_ = before_write;
  fd_ = created;
  // Room for the largest generated event (length byte < 255), with an attribute list, in a chunk.
  if (chunk_size <
      kChunkHeaderSize + kTimestampSize + kMaxOneAttributeList + kMaxEventSize + kEndOfFileSize) {
    error_ = EINVAL;
    return false;
  }
  // put_compressed() stores a whole word: 8 bytes of slack behind the chunk.
  chunk_.reset(new (std::nothrow) std::uint8_t[chunk_size + 8]);
  if (!chunk_) {
    error_ = ENOMEM;
    return false;
  }
  if (fd_ < 0) fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error_ = errno;
    return false;
  }
  size_ = chunk_size;
  start_chunk();
  return true;
}

void EventFileEncoder::start_chunk() {
  std::uint8_t* c = chunk_.get();
  c[0] = kChunkHeader;
  c[1] = kLittleEndian;
  const std::uint64_t first = events_ + 1, last = 0; // event numbers count from 1
  std::memcpy(c + 2, &first, sizeof first);
  std::memcpy(c + kLastEventOffset, &last, sizeof last);
  pos_ = kChunkHeaderSize;
  stamped_ = false;
}

bool EventFileEncoder::next_chunk() {
  if (error_ != 0 || size_ == 0) return false;
  std::memcpy(chunk_.get() + kLastEventOffset, &events_, sizeof events_);
  std::memset(chunk_.get() + pos_, kEndOfChunk, size_ - pos_);
  if (!write_all(chunk_.get(), size_)) return false;
  if (write_behind_) // (advice: a failure shows in the fsync that follows)
    ::sync_file_range(fd_, static_cast<off_t>(chunks_written_ * size_), static_cast<off_t>(size_),
                      SYNC_FILE_RANGE_WRITE);
  ++chunks_written_;
  start_chunk();
  return true;
}

bool EventFileEncoder::write_all(const std::uint8_t* p, std::size_t n) {
  if (before_write_) before_write_();
  while (n > 0) {
    const ssize_t done = ::write(fd_, p, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) {
      error_ = done == 0 ? ENOSPC : errno; // 0 bytes: a full device that set no errno
      return false;
    }
    p += done;
    n -= static_cast<std::size_t>(done);
  }
  return true;
}

bool EventFileEncoder::finish() {
  if (error_ != 0 || size_ == 0) return false;
  std::memcpy(chunk_.get() + kLastEventOffset, &events_, sizeof events_);
  chunk_[pos_++] = kEndOfFile;
  chunk_[pos_++] = kEndOfBuffer; // as OTF2 ends its files
  const bool written = write_all(chunk_.get(), pos_);
  size_ = 0;
  const int fd = fd_;
  fd_ = -1;
  // close() reports what a network or delayed-allocation file system could not write.
  if (::close(fd) != 0 && written) error_ = errno;
  return written && error_ == 0;
}

} // namespace htrace::format
