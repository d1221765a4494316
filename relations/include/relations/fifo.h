// A first-in first-out queue that costs nothing while empty. The readers keep queues per location
// and per message channel, most of them empty or short; std::deque allocates about 600 bytes as it
// is constructed, which at tens of thousands of locations made those allocations a large part of
// a report's time. Here the items live in one vector from `head_` on: popping advances `head_`,
// and the consumed prefix is dropped when the queue empties or is at least half the vector, so
// each item is moved at most once on average. References stay valid until the next push or pop.
#ifndef HTRACE_RELATIONS_FIFO_H
#define HTRACE_RELATIONS_FIFO_H

#include <cstddef>
#include <vector>

namespace htrace::relations {

template <class T> class Fifo {
public:
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }

  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  T& operator[](std::size_t i) { return items_[head_ + i]; }
  const T& operator[](std::size_t i) const { return items_[head_ + i]; }

  void push_back(const T& item) { items_.push_back(item); }
  void pop_front() {
    ++head_;
    if (head_ == items_.size()) {
      clear();
    } else if (head_ >= kCompactAfter && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }

  auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() const { return items_.end(); }

private:
  /// Short queues are only compacted when they empty.
  static constexpr std::size_t kCompactAfter = 32;
  std::vector<T> items_;
  std::size_t head_ = 0;
};

} // namespace htrace::relations
#endif
