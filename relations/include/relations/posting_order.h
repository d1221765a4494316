// Operations of one location handed out in the order they were posted, each once it is resolved.
// MPI orders both collective calls (per communicator) and point-to-point messages (per channel) by
// the order in which a process posts them, but a non-blocking operation tells what it was only at
// its completion, which may come after later operations completed. A reader that streams the
// events therefore holds an operation until every operation posted before it is resolved; a
// reader that sees the whole location first gets the same order. Memory: the operations from the
// earliest unresolved one on.
#ifndef HTRACE_RELATIONS_POSTING_ORDER_H
#define HTRACE_RELATIONS_POSTING_ORDER_H

#include "relations/fifo.h"

#include <cstdint>

namespace htrace::relations {

template <class Operation> class PostingOrder {
public:
  /// An operation's place in the posting order.
  using Ticket = std::uint64_t;

  /// Posts an operation whose outcome is not known yet.
  Ticket post(const Operation& op) {
    pending_.push_back({op, false, false});
    return first_ + pending_.size() - 1;
  }
  /// The operation a ticket names while it is held.
  Operation& at(Ticket t) { return pending_[t - first_].op; }

  /// The operation happened: it is handed out (`out(const Operation&)`) in posting order.
  template <class Out> void resolve(Ticket t, Out&& out) { settle(t, true, out); }
  /// The operation never happened (cancelled, or it carries no relation): nothing is handed out.
  template <class Out> void drop(Ticket t, Out&& out) { settle(t, false, out); }
  /// Posts an operation resolved at once (a blocking call).
  template <class Out> void complete(const Operation& op, Out&& out) {
    if (pending_.empty()) {
      ++first_;
      out(op);
    } else {
      settle(post(op), true, out);
    }
  }

  /// After the location's last event: operations never resolved number nothing; the resolved
  /// ones still held behind them are handed out.
  template <class Out> void finish(Out&& out) {
    for (const Pending& p : pending_)
      if (p.resolved && p.happened) out(p.op);
    first_ += pending_.size();
    pending_.clear();
  }

private:
  struct Pending {
    Operation op;
    bool resolved, happened;
  };
  template <class Out> void settle(Ticket t, bool happened, Out& out) {
    Pending& p = pending_[t - first_];
    p.resolved = true;
    p.happened = happened;
    while (!pending_.empty() && pending_.front().resolved) {
      if (pending_.front().happened) out(pending_.front().op);
      pending_.pop_front();
      ++first_;
    }
  }

  Fifo<Pending> pending_; ///< from the earliest unresolved operation on, in posting order
  Ticket first_ = 0;      ///< ticket of pending_.front()
};

} // namespace htrace::relations
#endif
