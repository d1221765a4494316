#include "format/copy_arena.h"

#include <cstdint>
#include <new>
#include <sys/mman.h>

namespace htrace::format {

CopyArena::~CopyArena() {
  for (Slab& s : slabs_)
    unmap(s);
}

uint8_t* CopyArena::take(size_t size, uint32_t* slab) {
  if (size > kSlab) throw std::bad_alloc();
  if (slabs_.empty() || kSlab - slabs_.back().used < size) {
    if (!slabs_.empty() && slabs_.back().holders == 0) unmap(slabs_.back());
    // Twice the size, then the ends trimmed: a slab on a 2 MiB boundary can be one huge page.
    void* p =
        ::mmap(nullptr, 2 * kSlab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (start + kSlab - 1) & ~uintptr_t{kSlab - 1};
    if (aligned > start) ::munmap(p, aligned - start);
    if (const size_t tail = start + kSlab - aligned)
      ::munmap(reinterpret_cast<void*>(aligned + kSlab), tail);
    ::madvise(reinterpret_cast<void*>(aligned), kSlab, MADV_HUGEPAGE); // a hint: errors ignored
    slabs_.push_back({reinterpret_cast<uint8_t*>(aligned), 0, 0});
  }
  Slab& s = slabs_.back();
  uint8_t* const room = s.base + s.used;
  s.used += size;
  ++s.holders;
  *slab = static_cast<uint32_t>(slabs_.size() - 1);
  return room;
}

void CopyArena::shrink_last(size_t taken, size_t size) {
  slabs_.back().used -= taken - size;
}

void CopyArena::release(uint32_t slab) {
  Slab& s = slabs_[slab];
  if (--s.holders == 0 && slab + 1 < slabs_.size()) unmap(s);
}

void CopyArena::unmap(Slab& s) {
  if (s.base) ::munmap(s.base, kSlab);
  s.base = nullptr;
}

} // namespace htrace::format
