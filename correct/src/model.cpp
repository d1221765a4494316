#include "correct/model.h"

#include <algorithm>
#include <stdexcept>

namespace htrace::correct {

int64_t Presync::piecewise_offset(int64_t t) const {
  // The segment whose end is the first knot after t; before the first or after the last knot,
  // the nearest segment.
  const auto after = std::upper_bound(knots.begin(), knots.end(), t,
                                      [](int64_t v, const ClockKnot& k) { return v < k.time; });
  const size_t hi =
      std::clamp<size_t>(static_cast<size_t>(after - knots.begin()), 1, knots.size() - 1);
  const ClockKnot& a = knots[hi - 1];
  const ClockKnot& b = knots[hi];
  const double rate = double(b.offset - a.offset) / double(b.time - a.time);
  return a.offset + static_cast<int64_t>(std::llround(rate * double(t - a.time)));
}

const char* const kMessageKindNames[kMessageKinds] = {"p2p", "collective", "OpenMP"};

P2PStream* ChannelTable::cached(uint64_t src, uint64_t dst, uint64_t comm_tag) {
  for (StreamCache& c : cache_)
    if (c.stream && c.src == src && c.dst == dst && c.comm_tag == comm_tag) return c.stream;
  return nullptr;
}

void ChannelTable::remember(P2PStream* s) {
  cache_[next_cache_++ % cache_.size()] = {s->src, s->dst, s->comm_tag, s};
}

P2PStream& ChannelTable::stream(uint64_t src, uint64_t dst, uint64_t comm_tag) {
  if (P2PStream* s = cached(src, dst, comm_tag)) return *s;
  auto [it, inserted] = streams.try_emplace({ChannelType::P2P, src, dst, comm_tag, 0});
  P2PStream* s = &it->second;
  if (inserted) {
    s->src = src, s->dst = dst, s->comm_tag = comm_tag;
    s->id = static_cast<uint32_t>(stream_list.size());
    stream_list.push_back(s);
  }
  remember(s);
  return *s;
}

uint32_t ChannelTable::p2p(P2PStream& s, uint64_t sequence) {
  if (sequence >= s.channels.size())
    s.channels.resize(std::max<size_t>(sequence + 1, s.channels.size() * 2), UINT32_MAX);
  uint32_t& id = s.channels[sequence];
  if (id == UINT32_MAX) {
    if (sequence > UINT32_MAX) throw internal_error("more than 2^32 messages in one stream");
    id = add(ChannelType::P2P, MessageKind::P2P, s.id, static_cast<uint32_t>(sequence));
  }
  return id;
}

size_t ChannelTable::probe(const ChannelKey& key, uint32_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const IndexSlot& s = slots_[i];
    if (s.key_index == UINT32_MAX || (s.hash == hash && keys[s.key_index] == key)) return i;
  }
}

void ChannelTable::grow() {
  std::vector<IndexSlot> old(std::max<size_t>(1024, slots_.size() * 2));
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const IndexSlot& s : old) {
    if (s.key_index == UINT32_MAX) continue;
    size_t i = s.hash & mask;
    while (slots_[i].key_index != UINT32_MAX)
      i = (i + 1) & mask;
    slots_[i] = s;
  }
}

uint32_t ChannelTable::get(const ChannelKey& key, MessageKind kind) {
  const auto hash = static_cast<uint32_t>(ChannelKeyHash{}(key));
  if (2 * (indexed_ + 1) > slots_.size()) grow();
  IndexSlot& s = slots_[probe(key, hash)];
  if (s.key_index != UINT32_MAX) return s.channel;
  keys.emplace_back() = key;
  const auto key_index = static_cast<uint32_t>(keys.size() - 1);
  s = {hash, key_index, add(key.type, kind, key_index, 0)};
  ++indexed_;
  return s.channel;
}

uint32_t ChannelTable::find(const ChannelKey& key) const {
  if (slots_.empty()) return UINT32_MAX;
  const IndexSlot& s = slots_[probe(key, static_cast<uint32_t>(ChannelKeyHash{}(key)))];
  return s.key_index == UINT32_MAX ? UINT32_MAX : s.channel;
}

P2PStream* ChannelTable::find_stream(uint64_t src, uint64_t dst, uint64_t comm_tag) {
  if (P2PStream* s = cached(src, dst, comm_tag)) return s;
  auto it = streams.find({ChannelType::P2P, src, dst, comm_tag, 0});
  if (it == streams.end()) return nullptr;
  remember(&it->second);
  return &it->second;
}

} // namespace htrace::correct
