// Per-location state kept cache-friendly for readers in time order, which visit thousands of
// locations in turn: by the time a location's next event comes, its state has left the cache.
// Small stacks are kept in place, in the location's record instead of a heap block of their own
// (one miss fewer at every enter and leave), and a location's records can be fetched ahead: the
// event merge knows which location comes next one event ahead (format/event_merge.h).
#ifndef HTRACE_RELATIONS_LOCATION_CACHE_H
#define HTRACE_RELATIONS_LOCATION_CACHE_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace htrace::relations {

/// Asks for every cache line of `object` to be brought into the cache; changes nothing.
template <class T> inline void prefetch_object(const T& object) {
  const char* const p = reinterpret_cast<const char*>(&object);
  for (std::size_t offset = 0; offset < sizeof(T); offset += 64)
    __builtin_prefetch(p + offset);
  __builtin_prefetch(p + sizeof(T) - 1); // the line an unaligned object ends in
}

/// Likewise for the cache lines from `begin` up to `end`: the part of a record that is read first.
inline void prefetch_span(const void* begin, const void* end) {
  for (const char* p = static_cast<const char*>(begin); p < end; p += 64)
    __builtin_prefetch(p);
}

/// A stack whose first N elements live in place and the rest in a vector.
template <class T, std::size_t N> class InlineStack {
public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void push(const T& v) {
    if (size_ < N)
      first_[size_] = v;
    else
      more_.push_back(v);
    ++size_;
  }
  /// Not empty.
  void pop() {
    if (size_ > N) more_.pop_back();
    --size_;
  }
  T& top() { return size_ <= N ? first_[size_ - 1] : more_.back(); }
  const T& top() const { return size_ <= N ? first_[size_ - 1] : more_.back(); }
  /// From the bottom (0) to the top (size() - 1).
  T& operator[](std::size_t i) { return i < N ? first_[i] : more_[i - N]; }
  const T& operator[](std::size_t i) const { return i < N ? first_[i] : more_[i - N]; }

private:
  std::uint32_t size_ = 0;
  std::array<T, N> first_{};
  std::vector<T> more_;
};

} // namespace htrace::relations
#endif
