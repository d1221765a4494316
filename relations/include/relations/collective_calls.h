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

#include <cstdint>
#include <deque>
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
    open_blocking_ = push(ev, neighborhood);
    has_open_blocking_ = true;
  }
  template <class Out>
  void end(Event ev, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
           std::uint64_t received, Out&& out) {
    const std::uint64_t seq = has_open_blocking_ ? open_blocking_ : push(ev, false);
    has_open_blocking_ = false;
    resolve(seq, ev, op, comm, root, received, out);
  }
  /// NonBlockingCollectiveRequest; a request id still open is abandoned.
  void request(Event ev, std::uint64_t request, bool neighborhood) {
    open_requests_[request] = push(ev, neighborhood);
  }
  template <class Out>
  void complete(Event ev, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                std::uint64_t received, std::uint64_t request, Out&& out) {
    auto it = open_requests_.find(request);
    std::uint64_t seq = 0;
    if (it != open_requests_.end()) {
      seq = it->second;
      open_requests_.erase(it);
    } else {
      seq = push(ev, false);
    }
    resolve(seq, ev, op, comm, root, received, out);
  }
  /// After the location's last event: hands out the complete calls still held.
  template <class Out> void finish(Out&& out) {
    for (const Pending& p : pending_)
      if (p.resolved && !p.neighborhood) out(p.call);
    first_ += pending_.size();
    pending_.clear();
    open_requests_.clear();
    has_open_blocking_ = false;
  }

private:
  struct Pending {
    CollectiveCall call;
    bool neighborhood = false, resolved = false;
  };
  std::uint64_t push(Event begin, bool neighborhood) {
    Pending p;
    p.call.begin = begin;
    p.neighborhood = neighborhood;
    pending_.push_back(p);
    return first_ + pending_.size() - 1;
  }
  template <class Out>
  void resolve(std::uint64_t seq, Event ev, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
               std::uint64_t received, Out& out) {
    Pending& p = pending_[seq - first_];
    p.call.end = ev;
    p.call.op = op;
    p.call.comm = comm;
    p.call.root = root;
    p.call.received = received;
    p.resolved = true;
    while (!pending_.empty() && pending_.front().resolved) {
      if (!pending_.front().neighborhood) out(pending_.front().call);
      pending_.pop_front();
      ++first_;
    }
  }

  std::deque<Pending> pending_; ///< calls from the earliest incomplete one on, in begin order
  std::uint64_t first_ = 0;     ///< sequence number of pending_.front()
  std::unordered_map<std::uint64_t, std::uint64_t> open_requests_; ///< request -> sequence
  std::uint64_t open_blocking_ = 0;
  bool has_open_blocking_ = false;
};

} // namespace htrace::relations
#endif
