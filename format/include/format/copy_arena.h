// Memory for the windows onto many files read at once (format::FileWindow): packed into 2 MiB
// slabs, aligned so that the kernel may back each with one huge page. Each file's own allocation
// (a malloc from a heap fragmented by thousands of them) and the page faults of its fresh 4 KiB
// pages were, with 16,384 files of a few KiB, most of the time a reader spent before its first
// event. A slab is given back when every file in it is released, so memory stays bounded by the
// files still in use.
#ifndef HTRACE_FORMAT_COPY_ARENA_H
#define HTRACE_FORMAT_COPY_ARENA_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace htrace::format {

class CopyArena {
public:
  static constexpr size_t kSlab = 2 * 1024 * 1024;

  CopyArena() = default;
  CopyArena(const CopyArena&) = delete;
  CopyArena& operator=(const CopyArena&) = delete;
  ~CopyArena();

  // Room for `size` bytes (at most kSlab); `*slab` names the slab to release it from. Throws
  // std::bad_alloc if no memory can be mapped.
  uint8_t* take(size_t size, uint32_t* slab);
  // The last room taken, of `taken` bytes, needs only `size` (at most `taken`).
  void shrink_last(size_t taken, size_t size);
  // One file of `slab` is done; the slab is unmapped when it holds no more and is full.
  void release(uint32_t slab);

private:
  struct Slab {
    uint8_t* base = nullptr; // nullptr once unmapped
    size_t used = 0;
    uint32_t holders = 0;
  };
  void unmap(Slab& s);
  std::vector<Slab> slabs_; // the last one is being filled
};

} // namespace htrace::format
#endif
