#include "correct/huge_pages.h"

#include <cstdint>
#include <sys/mman.h>

namespace htrace::correct {

void* map_huge_pages(size_t bytes) {
  const size_t size = huge_page_round(bytes);
  // Over-map by one huge page and trim, so the block starts on a huge-page boundary.
  const size_t padded = size + kHugePageSize;
  void* raw = mmap(nullptr, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageSize - 1) & ~(kHugePageSize - 1);
  if (aligned > start) munmap(raw, aligned - start);
  if (const size_t tail = start + padded - (aligned + size))
    munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* block = reinterpret_cast<void*>(aligned);
  madvise(block, size, MADV_HUGEPAGE); // advisory: failure only costs page faults
  return block;
}

void unmap_huge_pages(void* data, size_t bytes) {
  munmap(data, huge_page_round(bytes));
}

} // namespace htrace::correct
