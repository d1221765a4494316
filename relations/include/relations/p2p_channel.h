// A point-to-point channel (p2p_messages.h), and an index that numbers channels in the order
// they are first seen, found by open addressing: a reader looks a message's channel up at each of
// its ends, and at tens of thousands of processes a tree of channels cost a cache miss per level,
// a node-based hash map a division and two misses.
#ifndef HTRACE_RELATIONS_P2P_CHANNEL_H
#define HTRACE_RELATIONS_P2P_CHANNEL_H

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace htrace::relations {

struct P2pChannel {
  std::uint32_t src = 0, dst = 0;  ///< the sending and the receiving process (the caller's index)
  std::uint32_t comm = 0, tag = 0; ///< the communicator (global id) and the tag
  bool operator<(const P2pChannel& o) const {
    return std::tie(src, dst, comm, tag) < std::tie(o.src, o.dst, o.comm, o.tag);
  }
  bool operator==(const P2pChannel& o) const {
    return src == o.src && dst == o.dst && comm == o.comm && tag == o.tag;
  }
};

class ChannelIndex {
public:
  /// The number of `c`: size() before the call if it is new.
  std::uint32_t find_or_add(const P2pChannel& c) {
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
  const P2pChannel& operator[](std::uint32_t i) const { return keys_[i]; }
  void clear() {
    keys_.clear();
    slots_.clear();
  }

private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  std::size_t slot_of(const P2pChannel& c) const {
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

  std::vector<P2pChannel> keys_;     ///< by number
  std::vector<std::uint32_t> slots_; ///< a key's number or kEmpty; a power of two long
};

} // namespace htrace::relations
#endif
