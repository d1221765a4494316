#include "message_probe.h"

namespace htrace::report {

MessageProbe::MessageProbe(const ArchiveDefs& defs, const ChannelKey& channel, std::uint64_t index)
    : defs_(defs), channel_(channel), index_(index), stacks_(defs.locations.size()) {}

void MessageProbe::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  stacks_[loc].push_back({region, defs_.ns_from_start(t)});
}

void MessageProbe::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) {
  auto& stack = stacks_[loc];
  if (stack.empty()) return;
  for (auto& [event, depth] : awaiting_)
    if (event->loc == loc && event->region_end < 0 && depth == stack.size())
      event->region_end = defs_.ns_from_start(t);
  stack.pop_back();
}

void MessageProbe::capture(ProbedEvent& e, std::uint32_t loc, std::uint64_t t,
                           std::uint64_t bytes) {
  e.found = true;
  e.loc = loc;
  e.t = defs_.ns_from_start(t);
  e.bytes = bytes;
  if (stacks_[loc].empty()) return;
  e.region = stacks_[loc].back().region;
  e.region_begin = stacks_[loc].back().begin;
  awaiting_.emplace_back(&e, stacks_[loc].size());
}

bool MessageProbe::between(long src, long dst) const {
  return src >= 0 && dst >= 0 && defs_.locations[src].process == channel_.src &&
         defs_.locations[dst].process == channel_.dst;
}

void MessageProbe::send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
                        std::uint32_t tag, std::uint64_t bytes) {
  if (comm != channel_.comm || tag != channel_.tag) return;
  if (between(loc, defs_.member(comm, peer)) && sends_++ == index_) capture(sent, loc, t, bytes);
}

void MessageProbe::recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
                        std::uint32_t tag, std::uint64_t bytes) {
  if (comm != channel_.comm || tag != channel_.tag) return;
  if (between(defs_.member(comm, peer), loc) && recvs_++ == index_)
    capture(received, loc, t, bytes);
}

} // namespace htrace::report
