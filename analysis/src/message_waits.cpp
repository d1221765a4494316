#include "message_waits.h"

namespace htrace::analysis::detail {

MessageWaits::MessageWaits(const RunLayout& layout, MpiCalls& calls)
    : layout_(layout), calls_(calls), posted_(layout.process_of.size()),
      irecv_posted_(layout.process_of.size()) {
  for (const auto& [ref, def] : layout.regions)
    if (def.cls.mpi()) send_blocking_[ref] = send_blocking(def.name);
}

MessageWaits::End MessageWaits::end_at(std::uint32_t loc) const {
  End e;
  e.loc = loc;
  if (const auto call = calls_.current(loc)) {
    e.in_call = true;
    e.call = *call;
  }
  return e;
}

void MessageWaits::send(std::uint32_t loc, std::uint32_t comm, long receiver, std::uint32_t tag,
                        std::uint64_t request) {
  if (receiver < 0) return; // joins no channel
  End e = end_at(loc);
  const relations::P2pChannel ch{layout_.process_of[loc], layout_.process_of[receiver], comm, tag};
  if (request != kBlockingRequest) return posted_[loc].isend(ch, e, request, matched());
  if (e.in_call) {
    auto kind = send_blocking_.find(e.call.region);
    e.blocking = kind == send_blocking_.end() ? SendBlocking::Never : kind->second;
    e.held = e.blocking != SendBlocking::Never;
    if (e.held) calls_.hold(e.call);
  }
  posted_[loc].send(ch, e, matched());
}

void MessageWaits::recv(std::uint32_t loc, std::uint32_t comm, long sender, std::uint32_t tag,
                        std::uint64_t request) {
  if (sender < 0) { // joins no channel: it takes no place in the posting order either
    if (request != kBlockingRequest) cancelled(loc, request);
    return;
  }
  End e = end_at(loc);
  e.posted = e.in_call ? e.call.enter : kUnknown;
  if (request != kBlockingRequest) {
    auto it = irecv_posted_[loc].find(request);
    if (it != irecv_posted_[loc].end()) {
      e.posted = it->second;
      irecv_posted_[loc].erase(it);
    }
  }
  e.held = e.in_call;
  if (e.held) calls_.hold(e.call);
  const relations::P2pChannel ch{layout_.process_of[sender], layout_.process_of[loc], comm, tag};
  if (request == kBlockingRequest)
    posted_[loc].recv(ch, e, matched());
  else
    posted_[loc].irecv(ch, e, request, matched());
}

void MessageWaits::isend_complete(std::uint32_t loc, std::uint64_t request) {
  posted_[loc].isend_complete(request, matched());
}

void MessageWaits::irecv_request(std::uint32_t loc, std::uint64_t request) {
  const auto call = calls_.current(loc);
  irecv_posted_[loc][request] = call ? call->enter : kUnknown;
  posted_[loc].irecv_request(request);
}

void MessageWaits::cancelled(std::uint32_t loc, std::uint64_t request) {
  irecv_posted_[loc].erase(request);
  posted_[loc].cancelled(request, matched());
}

void MessageWaits::queue(const relations::MessageEnd<End>& e) {
  Queues& q = channels_[e.channel];
  (e.side == relations::P2pSide::Send ? q.sends : q.receives).push_back(e.what);
  while (!q.sends.empty() && !q.receives.empty()) {
    pair(e.channel.comm, q.sends.front(), q.receives.front());
    q.sends.pop_front();
    q.receives.pop_front();
  }
}

void MessageWaits::pair(std::uint32_t comm, const End& send, const End& recv) {
  if (recv.held) {
    const Candidate late_sender{WaitPattern::LateSender, send.call.enter - recv.call.enter,
                                send.loc, comm};
    calls_.settle(recv.call, send.in_call ? &late_sender : nullptr);
  }
  if (send.held && recv.posted == kUnknown) calls_.settle(send.call, nullptr);
  if (send.held && recv.posted != kUnknown) {
    const Candidate late_receiver{WaitPattern::LateReceiver, recv.posted - send.call.enter,
                                  recv.loc, comm, send.blocking == SendBlocking::IfRendezvous};
    calls_.settle(send.call, &late_receiver);
  }
}

void MessageWaits::finish() {
  for (auto& p : posted_)
    p.finish(matched());
  for (const auto& [channel, q] : channels_) {
    for (const End& e : q.sends)
      if (e.held) calls_.settle(e.call, nullptr);
    for (const End& e : q.receives)
      if (e.held) calls_.settle(e.call, nullptr);
  }
  channels_.clear();
}

} // namespace htrace::analysis::detail
