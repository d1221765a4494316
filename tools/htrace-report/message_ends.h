// The point-to-point message ends of an archive in the order MPI matches them
// (relations/p2p_messages.h: per channel, the k-th send posted with the k-th receive posted), for
// a sink that streams the events. A sink keeps what it needs of each record as the Payload and
// gets it back once every operation its location posted before is resolved. Memory: the ends held
// behind open requests, never one entry per message.
#pragma once

#include "archive_defs.h"
#include "event_scan.h"
#include "relations/p2p_messages.h"
#include "relations/ref_index.h"

#include <vector>

namespace htrace::report {

using relations::P2pChannel;
using relations::P2pSide;

template <class Payload> class MessageEnds {
public:
  using End = relations::MessageEnd<Payload>;
  explicit MessageEnds(const ArchiveDefs& defs)
      : defs_(defs), comms_(defs.comms), locations_(defs.locations.size()) {}

  /// MpiSend or MpiIsend of location `loc`; false if the receiver is not in the definitions (the
  /// send joins no channel).
  template <class Out>
  bool send(std::uint32_t loc, std::uint32_t comm, std::uint32_t peer, std::uint32_t tag,
            std::uint64_t request, const Payload& p, Out&& out) {
    const long dst = member(comm, peer);
    if (dst < 0) return false;
    const P2pChannel ch{defs_.locations[loc].process, defs_.locations[dst].process, comm, tag};
    if (request == kBlocking)
      locations_[loc].send(ch, p, out);
    else
      locations_[loc].isend(ch, p, request, out);
    return true;
  }
  /// MpiRecv or MpiIrecv (the completion); false if the sender is not in the definitions.
  template <class Out>
  bool recv(std::uint32_t loc, std::uint32_t comm, std::uint32_t peer, std::uint32_t tag,
            std::uint64_t request, const Payload& p, Out&& out) {
    const long src = member(comm, peer);
    if (src < 0) { // joins no channel: it takes no place in the posting order either
      if (request != kBlocking) locations_[loc].cancelled(request, out);
      return false;
    }
    const P2pChannel ch{defs_.locations[src].process, defs_.locations[loc].process, comm, tag};
    if (request == kBlocking)
      locations_[loc].recv(ch, p, out);
    else
      locations_[loc].irecv(ch, p, request, out);
    return true;
  }
  template <class Out> void isend_complete(std::uint32_t loc, std::uint64_t request, Out&& out) {
    locations_[loc].isend_complete(request, out);
  }
  void irecv_request(std::uint32_t loc, std::uint64_t request) {
    locations_[loc].irecv_request(request);
  }
  template <class Out> void cancelled(std::uint32_t loc, std::uint64_t request, Out&& out) {
    locations_[loc].cancelled(request, out);
  }
  /// After the last event: the ends still held.
  template <class Out> void finish(Out&& out) {
    for (auto& l : locations_)
      l.finish(out);
  }

private:
  /// ArchiveDefs::member through the index.
  long member(std::uint32_t comm, std::uint32_t rank) const {
    const Comm* c = comms_.find(comm);
    return c && rank < c->members.size() ? c->members[rank] : -1;
  }

  const ArchiveDefs& defs_;
  relations::RefIndex<Comm> comms_; ///< defs_.comms
  std::vector<relations::PostedMessages<Payload>> locations_;
};

/// An EventSink that matches messages: it keeps what it needs of each send and receive record as
/// the Payload (through ends_.send and ends_.recv) and gets every end back, in MPI's matching
/// order, in matched_end(). Its finish() must hand ends_ the ends still held.
template <class Payload> class MatchingSink : public EventSink {
public:
  void isend_complete(std::uint32_t loc, std::uint64_t, std::uint64_t request) override {
    ends_.isend_complete(loc, request, matched_ends());
  }
  void irecv_request(std::uint32_t loc, std::uint64_t, std::uint64_t request) override {
    ends_.irecv_request(loc, request);
  }
  void request_cancelled(std::uint32_t loc, std::uint64_t, std::uint64_t request) override {
    ends_.cancelled(loc, request, matched_ends());
  }

protected:
  explicit MatchingSink(const ArchiveDefs& defs) : ends_(defs) {}
  virtual void matched_end(const relations::MessageEnd<Payload>& end) = 0;
  auto matched_ends() {
    return [this](const relations::MessageEnd<Payload>& end) { matched_end(end); };
  }

  MessageEnds<Payload> ends_;
};

} // namespace htrace::report
