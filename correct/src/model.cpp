#include "correct/model.h"

namespace htrace::correct {

const char* const kMessageKindNames[kMessageKinds] = {"p2p", "collective", "OpenMP"};

uint32_t ChannelTable::get_p2p(const ChannelKey& key) {
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
  if (id == UINT32_MAX) id = add(key, MessageKind::P2P);
  return id;
}

uint32_t ChannelTable::get_hashed(const ChannelKey& key, MessageKind kind) {
  auto [it, inserted] = index.emplace(key, static_cast<uint32_t>(channels.size()));
  if (inserted) add(key, kind);
  return it->second;
}

uint32_t ChannelTable::find(const ChannelKey& key) const {
  if (key.type != ChannelType::P2P) {
    auto it = index.find(key);
    return it == index.end() ? UINT32_MAX : it->second;
  }
  auto it = streams.find({ChannelType::P2P, key.a, key.b, key.c, 0});
  if (it == streams.end() || key.d >= it->second.size()) return UINT32_MAX;
  return it->second[key.d];
}

} // namespace htrace::correct
