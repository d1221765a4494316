#include "message_waits.h"

#include <algorithm>

namespace htrace::analysis::detail {

MessageWaits::MessageWaits(const RunLayout& layout, MpiCalls& calls)
    : layout_(layout), calls_(calls),
      sending_regions_(layout.regions,
                       [](const format::RegionDef& def) {
                         return def.cls.mpi() && send_records(def.name) != SendRecords::None;
                       }),
      one_send_regions_(layout.regions,
                        [](const format::RegionDef& def) {
                          return def.cls.mpi() && send_records(def.name) == SendRecords::One;
                        }),
      sending_since_(layout.process_of.size(), kNoCall), receives_(layout.process_of.size()),
      give_up_after_(kGiveUpAfter * layout.process_of.size()),
      sending_at_(layout.process_of.size()), posted_(layout.process_of.size()),
      irecv_posted_(layout.process_of.size()), channel_numbers_(layout.process_of.size()),
      isend_flight_(layout.process_of.size()) {
  std::uint32_t processes = 0;
  for (const std::uint32_t p : layout.process_of)
    processes = std::max(processes, p + 1);
  arrivals_.reserve(processes);
  for (std::uint32_t p = 0; p < processes; ++p)
    arrivals_.emplace_back(&arrival_nodes_);
  std::vector<std::uint32_t> locations_of(processes);
  for (const std::uint32_t p : layout.process_of)
    ++locations_of[p];
  for (std::uint32_t p = 0; p < processes; ++p)
    arrivals_[p].one_location = locations_of[p] == 1;
  for (const auto& [ref, def] : layout.regions)
    if (def.cls.mpi()) send_blocking_[ref] = send_blocking(def.name);
}

void MessageWaits::enter(std::uint32_t loc, std::int64_t t, std::uint32_t region) {
  read_to(t);
  ++enters_;
  if (!sending_regions_.contains(region) || sending_since_[loc] != kNoCall) return;
  sending_since_[loc] = t;
  sending_at_[loc] = enters_;
  ++sending_;
  if (!in_time_order_) return;
  open_sends_.push_back({t, loc});
  if (open_sends_.size() > 2 * sending_ + 64) { // mostly entries of calls no longer open
    relations::Fifo<std::pair<std::int64_t, std::uint32_t>> open;
    for (const auto& [since, l] : open_sends_)
      if (sending_since_[l] == since) open.push_back({since, l});
    open_sends_ = std::move(open);
  }
}

void MessageWaits::leave(std::uint32_t loc, std::int64_t t) {
  read_to(t);
  if (sending_since_[loc] != kNoCall && !calls_.current(loc)) sent(loc);
}

void MessageWaits::sent(std::uint32_t loc) {
  sending_since_[loc] = kNoCall;
  --sending_;
}

std::int64_t MessageWaits::sends_before() {
  if (!in_time_order_) return sends_before_;
  // Calls are entered in time order: the first entry still open (and not given up) is the
  // earliest.
  while (!open_sends_.empty() &&
         (sending_since_[open_sends_.front().second] != open_sends_.front().first ||
          given_up(open_sends_.front().second)))
    open_sends_.pop_front();
  return open_sends_.empty() ? read_before_ : std::min(read_before_, open_sends_.front().first);
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
    if (one_send_regions_.contains(e.call.region) && sending_since_[loc] != kNoCall) sent(loc);
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

void MessageWaits::recv(std::uint32_t loc, std::int64_t t, std::uint32_t comm, long sender,
                        std::uint32_t tag, std::uint64_t request) {
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
  read_to(t);
  e.key = {t, loc, ++receives_[loc]};
  // Most receives are matched as they are recorded (their send was read first) and never join
  // the unmatched ones. (Receives matched meanwhile were recorded before this one.)
  recording_ = &e.key;
  matched_now_ = false;
  if (request == kBlockingRequest)
    posted_[loc].recv(ch, e, matched());
  else
    posted_[loc].irecv(ch, e, request, matched());
  recording_ = nullptr;
  if (!matched_now_) arrivals_[ch.dst].unmatched.insert(e.key);
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
  if (recording_ && recv.key.loc == recording_->loc && recv.key.n == recording_->n)
    matched_now_ = true;
  else
    a.unmatched.erase(recv.key);
  if (send.flight == 0) return;
  a.in_flight.erase({send.call.enter, send.flight});
  // Kept for the waits on receives recorded before this one: undecided, unmatched or (another
  // location's) not read yet.
  const bool needed = (!a.undecided.empty() && a.undecided.begin()->first < recv.key) ||
                      (!a.unmatched.empty() && *a.unmatched.begin() < recv.key) ||
                      (!a.one_location && !(recv.key < RecvKey{read_before_, 0, 0}));
  if (!needed) return;
  a.landed.emplace(recv.key, send.call.enter);
  a.landed_enters.insert(send.call.enter);
}

void MessageWaits::Arrivals::forget_landed(decltype(landed)::iterator end) {
  for (auto it = landed.begin(); it != end; ++it)
    landed_enters.erase(landed_enters.find(it->second));
  landed.erase(landed.begin(), end);
}

bool MessageWaits::wrong_order(std::uint32_t dst, std::int64_t send_enter) const {
  const Arrivals& a = arrivals_[dst];
  return (!a.in_flight.empty() && a.in_flight.begin()->first < send_enter) ||
         (!a.landed_enters.empty() && *a.landed_enters.begin() < send_enter);
}

// A wait on receive R is decided once no message that could make it wrong order can still come:
// every receive recorded before R is matched (a message taken by one of them is not received
// after R), every event before R is read (so are those receives) and every send entered before the
// late send is read.
void MessageWaits::decide(std::uint32_t dst, bool all) {
  Arrivals& a = arrivals_[dst];
  RecvKey first = kLastKey; // the first receive that may still be unmatched or unread
  if (!all) {
    // (A location's receives are read in order: another location's may come later.)
    if (!a.one_location) first = RecvKey{read_before_, 0, 0};
    if (!a.unmatched.empty()) first = std::min(first, *a.unmatched.begin());
  }
  auto& undecided = a.undecided;
  const std::int64_t sends = all || undecided.empty() ? INT64_MAX : sends_before();
  while (!undecided.empty() && undecided.begin()->first < first &&
         (all || undecided.begin()->second.send_enter < sends)) {
    const auto [key, u] = *undecided.begin();
    undecided.erase(undecided.begin());
    // Receives are decided in order, and every one still to come is recorded after this one: a
    // message received up to here matters to none.
    a.forget_landed(a.landed.upper_bound(key));
    calls_.settle(u.call, wrong_order(dst, u.send_enter) ? &u.wait : nullptr);
  }
  // A matched message matters only to a wait on a receive recorded before its own.
  RecvKey keep = first;
  if (!undecided.empty()) keep = std::min(keep, undecided.begin()->first);
  a.forget_landed(a.landed.lower_bound(keep));
}

void MessageWaits::advance(std::int64_t t) {
  if (t <= read_before_) return;
  read_before_ = t;
  if (!in_time_order_) {
    std::int64_t sends = t;
    for (std::uint32_t loc = 0; loc < sending_since_.size(); ++loc)
      if (sending_since_[loc] < sends && !given_up(loc)) sends = sending_since_[loc];
    sends_before_ = std::max(sends_before_, sends);
  }
  std::size_t kept = 0;
  for (const std::uint32_t dst : undecided_at_) {
    decide(dst);
    Arrivals& a = arrivals_[dst];
    a.listed = !a.undecided.empty();
    if (a.listed) undecided_at_[kept++] = dst;
  }
  undecided_at_.resize(kept);
}

void MessageWaits::pair(const relations::P2pChannel& ch, const End& send, const End& recv) {
  const std::uint32_t comm = ch.comm;
  land(ch.dst, send, recv);
  if (recv.held) {
    const Candidate late_sender{WaitPattern::LateSender, send.loc,
                                send.call.enter - recv.call.enter, comm};
    // Wrong order: a message to this process sent before this one is received after it.
    if (send.in_call && late_sender.wait_ns > 0) {
      Candidate wo = late_sender;
      wo.pattern = WaitPattern::LateSenderWrongOrder;
      CallRef call = recv.call; // (held already)
      calls_.hold(call);
      Arrivals& a = arrivals_[ch.dst];
      a.undecided.emplace(recv.key, Undecided{send.call.enter, call, wo});
      if (!a.listed) undecided_at_.push_back(ch.dst);
      a.listed = true;
    }
    calls_.settle(recv.call, send.in_call ? &late_sender : nullptr);
  }
  if (send.held && recv.posted == kUnknown) calls_.settle(send.call, nullptr);
  if (send.held && recv.posted != kUnknown) {
    const Candidate late_receiver{WaitPattern::LateReceiver, recv.loc,
                                  recv.posted - send.call.enter, comm,
                                  send.blocking == SendBlocking::IfRendezvous};
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
    a.landed_enters.clear();
    a.listed = false;
  }
}

} // namespace htrace::analysis::detail
