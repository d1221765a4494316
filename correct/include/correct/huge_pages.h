// Memory for the large per-event arrays (timestamps, records), mapped so that transparent huge
// pages can back it: one page fault per 2 MiB instead of 512, which is a visible share of the
// correction time on traces of millions of events.
#ifndef HTRACE_CORRECT_HUGE_PAGES_H
#define HTRACE_CORRECT_HUGE_PAGES_H

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace htrace::correct {

constexpr size_t kHugePageSize = size_t(2) << 20;

// `bytes` rounded up to whole huge pages, mapped at a huge-page boundary with MADV_HUGEPAGE
// (advisory). Throws std::bad_alloc.
void* map_huge_pages(size_t bytes);
void unmap_huge_pages(void* data, size_t bytes);
inline size_t huge_page_round(size_t bytes) {
  return (bytes + kHugePageSize - 1) & ~(kHugePageSize - 1);
}

// Allocator for per-event arrays: huge pages from one huge page up, and elements are left
// uninitialized on resize (every per-event value is written before it is read), so no pass of
// zeroing precedes the real one.
template <class T> struct EventArrayAllocator {
  using value_type = T;
  EventArrayAllocator() = default;
  template <class U> EventArrayAllocator(const EventArrayAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageSize) return std::allocator<T>().allocate(n);
    return static_cast<T*>(map_huge_pages(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageSize)
      std::allocator<T>().deallocate(p, n);
    else
      unmap_huge_pages(p, bytes);
  }
  template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
  template <class U, class... Args> void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U> bool operator==(const EventArrayAllocator<U>&) const noexcept { return true; }
  template <class U> bool operator!=(const EventArrayAllocator<U>&) const noexcept { return false; }
};

template <class T> using EventArray = std::vector<T, EventArrayAllocator<T>>;

} // namespace htrace::correct
#endif
