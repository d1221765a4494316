// Point-to-point channels numbered in the order they are first seen, found by open addressing:
// a message looks its channel up at each end, and at tens of thousands of processes a tree of
// channels cost a cache miss per level, a node-based hash map a division and two misses.
#ifndef HTRACE_ANALYSIS_CHANNEL_INDEX_H
#define HTRACE_ANALYSIS_CHANNEL_INDEX_H

#include "relations/p2p_messages.h"

#include <cstdint>
#include <vector>

namespace htrace::analysis::detail {

class ChannelIndex {
public:
  /// The number of `c`: size() before the call if it is new.
  std::uint32_t find_or_add(const relations::P2pChannel& c) {
    if (2 * (keys_.size() + 1) > slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t s = slot_of(c);; s = (s + 1) & mask) {
      const std::uint32_t i = slots_[s];
      if (i == kEmpty) {
        slots_[s] = static_cast<std::uint32_t>(keys_.size());
        keys_.push_back(c);
        return slots_[s];
      }
      if (keys_[i] == c) return i;
    }
  }
  std::size_t size() const { return keys_.size(); }
  const relations::P2pChannel& operator[](std::uint32_t i) const { return keys_[i]; }
  void clear() {
    keys_.clear();
    slots_.clear();
  }

private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  std::size_t slot_of(const relations::P2pChannel& c) const {
    const std::uint64_t h = ((std::uint64_t{c.src} << 32 | c.dst) * 0x9e3779b97f4a7c15ULL) ^
                            ((std::uint64_t{c.comm} << 32 | c.tag) * 0xc2b2ae3d27d4eb4fULL);
    return static_cast<std::size_t>((h ^ (h >> 32)) & (slots_.size() - 1));
  }
  // At most half full, so that a probe ends after a slot or two.
  void grow() {
    slots_.assign(slots_.empty() ? 64 : 2 * slots_.size(), kEmpty);
    const std::size_t mask = slots_.size() - 1;
    for (std::uint32_t i = 0; i < keys_.size(); ++i) {
      std::size_t s = slot_of(keys_[i]);
      while (slots_[s] != kEmpty)
        s = (s + 1) & mask;
      slots_[s] = i;
    }
  }

  std::vector<relations::P2pChannel> keys_; ///< by number
  std::vector<std::uint32_t> slots_;        ///< a key's number or kEmpty; a power of two long
};

} // namespace htrace::analysis::detail
#endif
