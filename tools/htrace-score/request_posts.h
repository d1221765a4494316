// Which row posted each open request of one location (request id -> row): open addressing with
// linear probing and backward-shift deletion, so that posting and completing requests allocates
// nothing once the table has grown to the requests a location has open at once.
#pragma once

#include <cstdint>
#include <vector>

namespace htrace::score {

class RequestPosts {
public:
  RequestPosts() { slots_.resize(64); }
  void clear() {
    for (Slot& s : slots_)
      s.used = false;
    size_ = 0;
  }
  void post(std::uint64_t request, std::uint32_t row) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot& s = slots_[find(request)];
    if (!s.used) ++size_;
    s = {request, row, true};
  }
  /// The posting row of `request`, or UINT32_MAX; `erase`: the request is done.
  std::uint32_t poster(std::uint64_t request, bool erase) {
    std::size_t i = find(request);
    if (!slots_[i].used) return UINT32_MAX;
    const std::uint32_t row = slots_[i].row;
    if (erase) remove(i);
    return row;
  }

private:
  struct Slot {
    std::uint64_t request = 0;
    std::uint32_t row = 0;
    bool used = false;
  };
  std::size_t mask() const { return slots_.size() - 1; }
  static std::size_t hash(std::uint64_t v) {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return static_cast<std::size_t>(v);
  }
  // The slot holding `request`, or the free slot where it would go.
  std::size_t find(std::uint64_t request) const {
    std::size_t i = hash(request) & mask();
    while (slots_[i].used && slots_[i].request != request)
      i = (i + 1) & mask();
    return i;
  }
  void remove(std::size_t i) {
    slots_[i].used = false;
    --size_;
    // Move later entries of the probe sequence back over the hole.
    for (std::size_t j = (i + 1) & mask(); slots_[j].used; j = (j + 1) & mask()) {
      const std::size_t home = hash(slots_[j].request) & mask();
      const bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (between) continue;
      slots_[i] = slots_[j];
      slots_[j].used = false;
      i = j;
    }
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) post(s.request, s.row);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

} // namespace htrace::score
