#include "correct/model.h"

namespace htrace::correct {

const char* const kMessageKindNames[kMessageKinds] = {"p2p", "collective", "OpenMP"};

P2PStream& ChannelTable::stream(uint64_t src, uint64_t dst, uint64_t comm_tag) {
  // Messages alternate between few streams: a small cache avoids most hash lookups.
  for (StreamCache& c : cache_)
    if (c.stream && c.src == src && c.dst == dst && c.comm_tag == comm_tag) return *c.stream;
  P2PStream* s = &streams[{ChannelType::P2P, src, dst, comm_tag, 0}];
  s->src = src, s->dst = dst, s->comm_tag = comm_tag;
  cache_[next_cache_++ % cache_.size()] = {src, dst, comm_tag, s};
  return *s;
}

uint32_t ChannelTable::p2p(P2PStream& s, uint64_t sequence) {
  if (sequence >= s.channels.size())
    s.channels.resize(std::max<size_t>(sequence + 1, s.channels.size() * 2), UINT32_MAX);
  uint32_t& id = s.channels[sequence];
  if (id == UINT32_MAX)
    id = add({ChannelType::P2P, s.src, s.dst, s.comm_tag, sequence}, MessageKind::P2P);
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
  if (it == streams.end() || key.d >= it->second.channels.size()) return UINT32_MAX;
  return it->second.channels[key.d];
}

} // namespace htrace::correct
