// Point-to-point messages as htrace-correct and htrace-report both match them. MPI's
// non-overtaking rule: on a channel (source process, destination process, communicator, tag) the
// k-th send posted pairs with the k-th receive posted. A receive is posted at its MpiIrecvRequest
// (non-blocking) or its MpiRecv (blocking: its thread posts nothing else until it returns), but
// its channel is known only at its completion, where the trace records the actual source and tag.
// Numbering receives on that resolved channel in posting order is exact, wildcards included: of
// two receives that both match a message on one channel, MPI hands it to the one posted first,
// so a later-posted receive never takes an earlier message of the channel. Completion order is
// not: a program that posts several Irecvs and waits for them out of order completes the second
// message first. A send is posted at its MpiSend or MpiIsend; a cancelled one (MpiRequestCancelled)
// was never delivered and numbers nothing, an Isend that never completes still counts.
//
// PostedMessages hands out one location's message ends in posting order, each once it is
// resolved; ChannelNumbers (location_channels.h) numbers them per channel. Which processes a
// message joins (unknown peers, messages inside one process) is the caller's to decide:
// PostedMessages needs only the records.
#ifndef HTRACE_RELATIONS_P2P_MESSAGES_H
#define HTRACE_RELATIONS_P2P_MESSAGES_H

#include "relations/p2p_channel.h"
#include "relations/posting_order.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace htrace::relations {

enum class P2pSide : std::uint8_t { Send, Receive };

/// One end of a message: its side, its channel and what the caller keeps of its event (for a
/// receive: of its completion).
template <class Payload> struct MessageEnd {
  P2pSide side;
  P2pChannel channel;
  Payload what;
};

/// The sends and receives of one location; every `out` is called as `out(const MessageEnd&)`,
/// sends in the order they were posted, receives in the order they were posted.
template <class Payload> class PostedMessages {
public:
  using End = MessageEnd<Payload>;

  /// MpiSend.
  template <class Out> void send(const P2pChannel& ch, const Payload& p, Out&& out) {
    sends_.complete({P2pSide::Send, ch, p}, out);
  }
  /// MpiIsend. A request id still open belongs to an Isend whose completion was not recorded: it
  /// counts as sent.
  template <class Out>
  void isend(const P2pChannel& ch, const Payload& p, std::uint64_t request, Out&& out) {
    const Ticket t = sends_.post({P2pSide::Send, ch, p});
    auto [it, inserted] = open_sends_.try_emplace(request, t);
    if (inserted) return;
    const Ticket older = it->second;
    it->second = t;
    sends_.resolve(older, out);
  }
  /// MpiIsendComplete.
  template <class Out> void isend_complete(std::uint64_t request, Out&& out) {
    auto it = open_sends_.find(request);
    if (it == open_sends_.end()) return;
    const Ticket t = it->second;
    open_sends_.erase(it);
    sends_.resolve(t, out);
  }
  /// MpiRecv.
  template <class Out> void recv(const P2pChannel& ch, const Payload& p, Out&& out) {
    receives_.complete({P2pSide::Receive, ch, p}, out);
  }
  /// MpiIrecvRequest; a request id still open is abandoned (numbers nothing).
  void irecv_request(std::uint64_t request) {
    open_receives_[request] = receives_.post({P2pSide::Receive, P2pChannel{}, Payload{}});
  }
  /// MpiIrecv (the completion); without its request record it is posted here.
  template <class Out>
  void irecv(const P2pChannel& ch, const Payload& p, std::uint64_t request, Out&& out) {
    auto it = open_receives_.find(request);
    if (it == open_receives_.end()) return receives_.complete({P2pSide::Receive, ch, p}, out);
    const Ticket t = it->second;
    open_receives_.erase(it);
    receives_.at(t) = {P2pSide::Receive, ch, p};
    receives_.resolve(t, out);
  }
  /// MpiRequestCancelled: the send or receive of that request never happened.
  template <class Out> void cancelled(std::uint64_t request, Out&& out) {
    if (auto it = open_sends_.find(request); it != open_sends_.end()) {
      const Ticket t = it->second;
      open_sends_.erase(it);
      sends_.drop(t, out);
    }
    if (auto it = open_receives_.find(request); it != open_receives_.end()) {
      const Ticket t = it->second;
      open_receives_.erase(it);
      receives_.drop(t, out);
    }
  }
  /// After the location's last event: Isends never completed count as sent, receives never
  /// completed number nothing.
  template <class Out> void finish(Out&& out) {
    for (const auto& [request, t] : open_sends_)
      sends_.resolve(t, out);
    open_sends_.clear();
    sends_.finish(out);
    open_receives_.clear();
    receives_.finish(out);
  }

private:
  using Ticket = typename PostingOrder<End>::Ticket;
  PostingOrder<End> sends_, receives_;
  std::unordered_map<std::uint64_t, Ticket> open_sends_, open_receives_; ///< request -> ticket
};

/// The count of each side's ends on one channel: the next end of a side is its k-th.
struct MessageCounts {
  std::uint64_t sends = 0, receives = 0;
  std::uint64_t next(P2pSide side) { return side == P2pSide::Send ? sends++ : receives++; }
};

} // namespace htrace::relations
#endif
