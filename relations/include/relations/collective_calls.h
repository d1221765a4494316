// The MPI collective calls of one location, as htrace-correct and htrace-report both number them:
// a blocking call is its MpiCollectiveBegin and the next MpiCollectiveEnd, a non-blocking one its
// NonBlockingCollectiveRequest and the NonBlockingCollectiveComplete of the same request (an end
// without its begin begins there). Calls are handed out complete and in begin order, because
// collective instances are numbered per communicator in each process's begin order; a call begun
// but never completed numbers nothing, and those begun after it are handed out by finish().
// Calls of neighbourhood collectives (format::RegionClass::neighborhood) carry no relation and
// are never handed out.
#ifndef HTRACE_RELATIONS_COLLECTIVE_CALLS_H
#define HTRACE_RELATIONS_COLLECTIVE_CALLS_H

#include "relations/event.h"
#include "relations/posting_order.h"

#include <cstdint>
#include <unordered_map>

namespace htrace::relations {

struct CollectiveCall {
  Event begin = 0, end = 0;
  std::uint8_t op = 0;
  std::uint32_t comm = 0, root = 0;
  std::uint64_t received = 0; ///< bytes this member received
};

class CollectiveCalls {
public:
  /// MpiCollectiveBegin; `neighborhood`: inside a neighbourhood collective's region. A begin
  /// while another blocking call is open abandons that one.
  void begin(Event ev, bool neighborhood) {
    open_blocking_ = calls_.post(held(ev, neighborhood));
    has_open_blocking_ = true;
  }
  template <class Out>
  void end(Event ev, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
           std::uint64_t received, Out&& out) {
    if (!has_open_blocking_)
      return calls_.complete(held(ev, false, op, comm, root, received), calls(out));
    has_open_blocking_ = false;
    resolve(open_blocking_, ev, op, comm, root, received, out);
  }
  /// NonBlockingCollectiveRequest; a request id still open is abandoned.
  void request(Event ev, std::uint64_t request, bool neighborhood) {
    open_requests_[request] = calls_.post(held(ev, neighborhood));
  }
  template <class Out>
  void complete(Event ev, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                std::uint64_t received, std::uint64_t request, Out&& out) {
    auto it = open_requests_.find(request);
    if (it == open_requests_.end())
      return calls_.complete(held(ev, false, op, comm, root, received), calls(out));
    const auto ticket = it->second;
    open_requests_.erase(it);
    resolve(ticket, ev, op, comm, root, received, out);
  }
  /// After the location's last event: hands out the complete calls still held.
  template <class Out> void finish(Out&& out) {
    calls_.finish(calls(out));
    open_requests_.clear();
    has_open_blocking_ = false;
  }

private:
  struct Held {
    CollectiveCall call;
    bool neighborhood;
  };
  using Ticket = PostingOrder<Held>::Ticket;
  /// Hands the calls out without their neighbourhood flag.
  template <class Out> struct Calls {
    Out& out;
    void operator()(const Held& h) const { out(h.call); }
  };
  template <class Out> static Calls<Out> calls(Out& out) { return {out}; }

  static Held held(Event begin, bool neighborhood, std::uint8_t op = 0, std::uint32_t comm = 0,
                   std::uint32_t root = 0, std::uint64_t received = 0) {
    return {{begin, begin, op, comm, root, received}, neighborhood};
  }
  template <class Out>
  void resolve(Ticket t, Event ev, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
               std::uint64_t received, Out& out) {
    Held& h = calls_.at(t);
    h.call.end = ev;
    h.call.op = op;
    h.call.comm = comm;
    h.call.root = root;
    h.call.received = received;
    if (h.neighborhood)
      calls_.drop(t, calls(out));
    else
      calls_.resolve(t, calls(out));
  }

  PostingOrder<Held> calls_;
  std::unordered_map<std::uint64_t, Ticket> open_requests_; ///< request -> its call
  Ticket open_blocking_ = 0;
  bool has_open_blocking_ = false;
};

} // namespace htrace::relations
#endif
