// Per-event arrays (timestamps) hold one value per event of a location, millions of them. Their
// elements are left uninitialized on resize, because every value is written before it is read:
// zero-filling first would be a whole extra pass over the memory.
#ifndef HTRACE_CORRECT_EVENT_ARRAY_H
#define HTRACE_CORRECT_EVENT_ARRAY_H

#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace htrace::correct {

template <class T> struct DefaultInitAllocator : std::allocator<T> {
  DefaultInitAllocator() = default;
  template <class U> DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U> struct rebind { using other = DefaultInitAllocator<U>; };
  template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
  template <class U, class... Args> void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T> using EventArray = std::vector<T, DefaultInitAllocator<T>>;

} // namespace htrace::correct
#endif
