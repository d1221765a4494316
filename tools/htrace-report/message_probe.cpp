#include "message_probe.h"

namespace htrace::report {

MessageProbe::MessageProbe(const ArchiveDefs& defs, const MessageRecord& send,
                           const MessageRecord& recv)
    : defs_(defs), send_(send), recv_(recv), records_(defs.locations.size()),
      stacks_(defs.locations.size()) {}

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

void MessageProbe::record(ProbedEvent& e, const MessageRecord& wanted, std::uint32_t loc,
                          std::uint64_t t, std::uint64_t bytes) {
  if (loc == wanted.loc && records_[loc] == wanted.ordinal) capture(e, loc, t, bytes);
}

void MessageProbe::send(std::uint32_t loc, std::uint64_t t, std::uint32_t, std::uint32_t,
                        std::uint32_t, std::uint64_t bytes, std::uint64_t) {
  record(sent, send_, loc, t, bytes);
  ++records_[loc];
}

void MessageProbe::recv(std::uint32_t loc, std::uint64_t t, std::uint32_t, std::uint32_t,
                        std::uint32_t, std::uint64_t bytes, std::uint64_t) {
  record(received, recv_, loc, t, bytes);
  ++records_[loc];
}

} // namespace htrace::report
