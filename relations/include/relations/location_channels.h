// Channel numbers (p2p_channel.h's ChannelIndex) found through the channel each location used
// last on each side: a program sends and receives on the same few channels again and again, and
// at thousands of processes the index's slot and key miss the cache at every message end, where
// a location's own entry is fetched ahead with the rest of its state (location_cache.h).
#ifndef HTRACE_RELATIONS_LOCATION_CHANNELS_H
#define HTRACE_RELATIONS_LOCATION_CHANNELS_H

#include "relations/location_cache.h"
#include "relations/p2p_channel.h"
#include "relations/p2p_messages.h"

#include <array>
#include <cstdint>
#include <vector>

namespace htrace::relations {

class LocationChannels {
public:
  explicit LocationChannels(std::size_t locations) : recent_(locations) {}

  /// The number of `c`, whose end of side `side` is `loc`'s: size() before the call if it is new.
  std::uint32_t find_or_add(std::uint32_t loc, P2pSide side, const P2pChannel& c) {
    Recent& r = recent_[loc][side == P2pSide::Send ? 0 : 1];
    if (r.number == kNone || !(r.channel == c)) r = {c, index_.find_or_add(c)};
    return r.number;
  }
  std::size_t size() const { return index_.size(); }
  const P2pChannel& operator[](std::uint32_t i) const { return index_[i]; }
  void prefetch(std::uint32_t loc) const { prefetch_object(recent_[loc]); }
  void clear() {
    index_.clear();
    for (auto& sides : recent_)
      sides = {};
  }

private:
  static constexpr std::uint32_t kNone = UINT32_MAX;
  struct Recent {
    P2pChannel channel;
    std::uint32_t number = kNone;
  };
  ChannelIndex index_;
  std::vector<std::array<Recent, 2>> recent_; ///< by location: its last send's, receive's
};

/// Numbers message ends per channel, for a reader that keeps no table of its own: both ends of a
/// message get the same (channel, k). Channels are numbered in the order they are first seen.
class ChannelNumbers {
public:
  struct Number {
    std::uint64_t channel, k;
  };
  explicit ChannelNumbers(std::size_t locations) : channels_(locations) {}
  /// `end` is `loc`'s: the sender's for a send, the receiver's for a receive.
  template <class Payload> Number number(std::uint32_t loc, const MessageEnd<Payload>& end) {
    const std::uint32_t channel = channels_.find_or_add(loc, end.side, end.channel);
    if (channel == counts_.size()) counts_.emplace_back();
    return {channel, counts_[channel].next(end.side)};
  }

private:
  LocationChannels channels_;
  std::vector<MessageCounts> counts_; ///< by channel number
};

} // namespace htrace::relations
#endif
