// Compact per-location event model: two timestamps per event plus sparse links to logical
// messages. Only events that take part in a logical message carry a Link.
#ifndef HTRACE_CORRECT_MODEL_H
#define HTRACE_CORRECT_MODEL_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

namespace htrace::correct {

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

enum class MessageKind : uint8_t { P2P = 0, Collective = 1, OpenMP = 2 };
constexpr int kMessageKinds = 3;
extern const char* const kMessageKindNames[kMessageKinds];

// What a channel connects; the key fields a..d depend on the type.
enum class ChannelType : uint8_t {
  P2P,     // a=src process, b=dst process, c=comm<<32|tag, d=sequence
  CollOut, // member -> coordinator: a=comm, b=sequence
  CollIn,  // coordinator -> member: a=comm, b=sequence, c=rank
  Local,   // OpenMP, inside one process: a=process<<8|sub-kind, b..d per sub-kind
};

struct ChannelKey {
  ChannelType type;
  uint64_t a, b, c, d;
  bool operator==(const ChannelKey& o) const {
    return type == o.type && a == o.a && b == o.b && c == o.c && d == o.d;
  }
};
struct ChannelKeyHash {
  size_t operator()(const ChannelKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.type);
    for (uint64_t v : {k.a, k.b, k.c, k.d})
      h = mix(h ^ v);
    return static_cast<size_t>(h);
  }
  static uint64_t mix(uint64_t x) { // splitmix64 finalizer: sequence numbers spread over all bits
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
};

// Largest two contributions with their sources, so a receiver can exclude its own one.
struct Top2 {
  int64_t v1 = kNoTime, v2 = kNoTime;
  uint32_t s1 = UINT32_MAX;
  void add(int64_t v, uint32_t source) {
    if (v > v1) {
      if (s1 != source) v2 = v1;
      v1 = v, s1 = source;
    } else if (source != s1 && v > v2) {
      v2 = v;
    }
  }
  int64_t excluding(uint32_t source) const { return source == s1 ? v2 : v1; }
};

struct Channel {
  ChannelKey key;
  MessageKind kind = MessageKind::P2P;
  int32_t expected = 0, arrived = 0;
  Top2 corrected, original; // contributions (forward LC, input time)
  Top2 ub_neg; // backward: negated (receiver time - l_min), so ub = -largest excluding self
  bool has_receiver = false;
  uint32_t op = 0, root = 0, rank = 0; // CollOut: collective op/root and this member's rank
};

// Receives sort first: an event takes its bounds before it passes its own time on.
enum class LinkRole : uint8_t { Receive = 0, Contribute = 1 };

struct Link {
  uint32_t event;
  LinkRole role;
  uint32_t channel; // index into ChannelTable::channels
};

struct ChannelTable {
  std::deque<Channel> channels; // deque: growth never copies (hundreds of thousands of channels)
  std::unordered_map<ChannelKey, uint32_t, ChannelKeyHash> index;
  // P2P channels by stream (src, dst, comm<<32|tag), then by sequence number: no hashing per
  // message.
  std::unordered_map<ChannelKey, std::vector<uint32_t>, ChannelKeyHash> streams;

  uint32_t get(const ChannelKey& key, MessageKind kind) {
    if (key.type == ChannelType::P2P) return get_p2p(key);
    return get_hashed(key, kind);
  }
  uint32_t get_p2p(const ChannelKey& key) {
    // Messages alternate between few streams: a small cache avoids most hash lookups.
    std::vector<uint32_t>* stream = nullptr;
    for (StreamCache& c : cache_)
      if (c.stream && c.a == key.a && c.b == key.b && c.c == key.c) stream = c.stream;
    if (!stream) {
      stream = &streams[{ChannelType::P2P, key.a, key.b, key.c, 0}];
      cache_[next_cache_++ % cache_.size()] = {key.a, key.b, key.c, stream};
    }
    std::vector<uint32_t>& seq = *stream;
    if (key.d >= seq.size()) seq.resize(std::max<size_t>(key.d + 1, seq.size() * 2), UINT32_MAX);
    uint32_t& id = seq[key.d];
    if (id == UINT32_MAX) {
      id = static_cast<uint32_t>(channels.size());
      channels.emplace_back();
      channels.back().key = key;
      channels.back().kind = MessageKind::P2P;
    }
    return id;
  }
  struct StreamCache {
    uint64_t a = 0, b = 0, c = 0;
    std::vector<uint32_t>* stream = nullptr; // unordered_map values never move
  };
  std::array<StreamCache, 4> cache_{};
  size_t next_cache_ = 0;

  uint32_t get_hashed(const ChannelKey& key, MessageKind kind) {
    auto [it, inserted] = index.emplace(key, static_cast<uint32_t>(channels.size()));
    if (inserted) {
      channels.emplace_back();
      channels.back().key = key;
      channels.back().kind = kind;
    }
    return it->second;
  }
};

struct Jump {
  uint32_t event;
  int64_t amount; // forward jump added by the receive rule
};

struct LocationModel {
  uint32_t location = 0; // index into Definitions::locations
  uint32_t process = 0;
  std::vector<int64_t> input; // timestamps as read (ClockOffsets applied by the reader)
  std::vector<int64_t> lc;    // pre-synchronized, then corrected
  std::vector<Link> links;    // ascending event
  std::vector<Jump> jumps;
};

} // namespace htrace::correct
#endif
