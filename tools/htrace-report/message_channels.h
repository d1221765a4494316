// Point-to-point messages between processes are matched the way MPI orders them: the k-th send
// from process S to process D on communicator C with tag T pairs with the k-th such receive (MPI's
// non-overtaking rule; receives are recorded with the actual source and tag). A channel is one
// (S, D, C, T); the table holds one small entry per channel, never one per message.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

namespace htrace::report {

struct ChannelKey {
  std::uint32_t src, dst, comm, tag; ///< processes (ArchiveDefs::processes indices), comm, tag
  bool operator<(const ChannelKey& o) const {
    return std::tie(src, dst, comm, tag) < std::tie(o.src, o.dst, o.comm, o.tag);
  }
};

/// Numbers the messages of every channel: the same (channel id, k) on the send and the receive.
class MessageNumbering {
public:
  /// Id of the next send on `key`; the matching receive gets the same id.
  std::uint64_t next_send(const ChannelKey& key) { return id(key, true); }
  std::uint64_t next_recv(const ChannelKey& key) { return id(key, false); }

private:
  struct Counts {
    std::uint64_t channel, sends = 0, recvs = 0;
  };
  std::uint64_t id(const ChannelKey& key, bool send) {
    auto it = channels_.find(key);
    if (it == channels_.end()) it = channels_.emplace(key, Counts{channels_.size()}).first;
    std::uint64_t& k = send ? it->second.sends : it->second.recvs;
    // channel in the high bits, message number in the low 32: unique while a channel carries
    // fewer than 2^32 messages and there are fewer than 2^30 channels.
    return (it->second.channel << 32) | (k++ & 0xffffffffu);
  }
  std::map<ChannelKey, Counts> channels_;
};

} // namespace htrace::report
