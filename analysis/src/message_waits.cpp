#include "message_waits.h"

#include <algorithm>

namespace htrace::analysis::detail {

MessageWaits::MessageWaits(const RunLayout& layout, MpiCalls& calls)
    : layout_(layout), calls_(calls), posted_(layout.process_of.size()),
      irecv_posted_(layout.process_of.size()), channel_numbers_(layout.process_of.size()),
      isend_flight_(layout.process_of.size()) {
  std::uint32_t processes = 0;
  for (const std::uint32_t p : layout.process_of)
    processes = std::max(processes, p + 1);
  arrivals_.resize(processes);
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
  if (e.in_call) {
    e.flight = ++flights_;
    arrivals_[ch.dst].in_flight.insert({e.call.enter, e.flight});
  }
  if (request != kBlockingRequest) {
    if (e.in_call) isend_flight_[loc][request] = {ch.dst, {e.call.enter, e.flight}};
    return posted_[loc].isend(ch, e, request, matched());
  }
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
  Arrivals& a = arrivals_[ch.dst];
  e.seq = ++a.receives;
  a.unmatched.insert(e.seq);
  if (request == kBlockingRequest)
    posted_[loc].recv(ch, e, matched());
  else
    posted_[loc].irecv(ch, e, request, matched());
}

void MessageWaits::isend_complete(std::uint32_t loc, std::uint64_t request) {
  isend_flight_[loc].erase(request);
  posted_[loc].isend_complete(request, matched());
}

void MessageWaits::irecv_request(std::uint32_t loc, std::uint64_t request) {
  const auto call = calls_.current(loc);
  irecv_posted_[loc][request] = call ? call->enter : kUnknown;
  posted_[loc].irecv_request(request);
}

void MessageWaits::cancelled(std::uint32_t loc, std::uint64_t request) {
  irecv_posted_[loc].erase(request);
  auto sent = isend_flight_[loc].find(request);
  if (sent != isend_flight_[loc].end()) {
    arrivals_[sent->second.first].in_flight.erase(sent->second.second);
    isend_flight_[loc].erase(sent);
  }
  posted_[loc].cancelled(request, matched());
}

void MessageWaits::queue(const relations::MessageEnd<End>& e) {
  const std::uint32_t number = channel_numbers_.find_or_add(e.what.loc, e.side, e.channel);
  if (number == channels_.size()) channels_.emplace_back();
  Queues& q = channels_[number];
  (e.side == relations::P2pSide::Send ? q.sends : q.receives).push_back(e.what);
  while (!q.sends.empty() && !q.receives.empty()) {
    pair(e.channel, q.sends.front(), q.receives.front());
    q.sends.pop_front();
    q.receives.pop_front();
  }
}

void MessageWaits::land(std::uint32_t dst, const End& send, const End& recv) {
  Arrivals& a = arrivals_[dst];
  if (auto it = a.unmatched.find(recv.seq); it != a.unmatched.end()) a.unmatched.erase(it);
  if (send.flight == 0) return;
  a.in_flight.erase({send.call.enter, send.flight});
  a.landed.emplace(recv.seq, send.call.enter);
}

bool MessageWaits::wrong_order(std::uint32_t dst, std::int64_t send_enter,
                               std::uint64_t seq) const {
  const Arrivals& a = arrivals_[dst];
  const auto& flying = a.in_flight;
  if (!flying.empty() && flying.begin()->first < send_enter) return true;
  const auto& landed = a.landed;
  for (auto it = landed.upper_bound(seq); it != landed.end(); ++it)
    if (it->second < send_enter) return true;
  return false;
}

void MessageWaits::decide(std::uint32_t dst, bool all) {
  Arrivals& a = arrivals_[dst];
  const auto& unmatched = a.unmatched;
  const std::uint64_t first =
      all || unmatched.empty() ? UINT64_MAX : *unmatched.begin(); // first unmatched receive
  auto& undecided = a.undecided;
  while (!undecided.empty() && undecided.begin()->first < first) {
    const auto [seq, u] = *undecided.begin();
    undecided.erase(undecided.begin());
    calls_.settle(u.call, wrong_order(dst, u.send_enter, seq) ? &u.wait : nullptr);
  }
  // A matched message matters only to a wait on a receive recorded before its own.
  std::uint64_t keep = first;
  if (!undecided.empty()) keep = std::min(keep, undecided.begin()->first);
  auto& landed = a.landed;
  landed.erase(landed.begin(), landed.lower_bound(keep));
}

void MessageWaits::pair(const relations::P2pChannel& ch, const End& send, const End& recv) {
  const std::uint32_t comm = ch.comm;
  land(ch.dst, send, recv);
  if (recv.held) {
    const Candidate late_sender{WaitPattern::LateSender, send.call.enter - recv.call.enter,
                                send.loc, comm};
    // Wrong order: a message to this process sent before this one is received after it.
    if (send.in_call && late_sender.wait_ns > 0) {
      Candidate wo = late_sender;
      wo.pattern = WaitPattern::LateSenderWrongOrder;
      calls_.hold(recv.call);
      arrivals_[ch.dst].undecided.emplace(recv.seq, Undecided{send.call.enter, recv.call, wo});
    }
    calls_.settle(recv.call, send.in_call ? &late_sender : nullptr);
  }
  if (send.held && recv.posted == kUnknown) calls_.settle(send.call, nullptr);
  if (send.held && recv.posted != kUnknown) {
    const Candidate late_receiver{WaitPattern::LateReceiver, recv.posted - send.call.enter,
                                  recv.loc, comm, send.blocking == SendBlocking::IfRendezvous};
    calls_.settle(send.call, &late_receiver);
  }
  decide(ch.dst);
}

void MessageWaits::finish() {
  for (auto& p : posted_)
    p.finish(matched());
  // By channel, so that the calls see a fixed order.
  std::vector<std::uint32_t> by_channel(channels_.size());
  for (std::uint32_t i = 0; i < by_channel.size(); ++i)
    by_channel[i] = i;
  std::sort(by_channel.begin(), by_channel.end(), [this](std::uint32_t a, std::uint32_t b) {
    return channel_numbers_[a] < channel_numbers_[b];
  });
  for (const std::uint32_t c : by_channel) {
    const Queues& q = channels_[c];
    for (const End& e : q.sends)
      if (e.held) calls_.settle(e.call, nullptr);
    for (const End& e : q.receives)
      if (e.held) calls_.settle(e.call, nullptr);
  }
  for (std::uint32_t dst = 0; dst < arrivals_.size(); ++dst)
    decide(dst, true);
  channels_.clear();
  channel_numbers_.clear();
  for (auto& f : isend_flight_)
    f.clear();
  for (Arrivals& a : arrivals_) {
    a.in_flight.clear();
    a.unmatched.clear();
    a.landed.clear();
  }
}

} // namespace htrace::analysis::detail
