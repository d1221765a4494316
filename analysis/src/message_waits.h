// Late Sender and Late Receiver: the waits of point-to-point messages. Message ends are matched
// as htrace-correct matches them (relations/p2p_messages.h: per channel, the k-th send posted
// with the k-th receive posted); each matched pair proposes
//  - to the call that completed the receive (MPI_Recv, MPI_Sendrecv, the MPI_Wait* or MPI_Test*
//    of an MPI_Irecv): a Late Sender wait from its enter to the enter of the send's call;
//  - to a blocking send's call (pattern_rules.h): a Late Receiver wait from its enter to the
//    enter of the call that posted the receive (MPI_Recv, MPI_Irecv).
// Memory: the ends behind open requests and the messages one side of which is not seen yet.
#ifndef HTRACE_ANALYSIS_MESSAGE_WAITS_H
#define HTRACE_ANALYSIS_MESSAGE_WAITS_H

#include "mpi_calls.h"
#include "pattern_rules.h"
#include "relations/p2p_messages.h"

#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

namespace htrace::analysis::detail {

class MessageWaits {
public:
  MessageWaits(const RunLayout& layout, MpiCalls& calls);
  void send(std::uint32_t loc, std::uint32_t comm, long receiver, std::uint32_t tag,
            std::uint64_t request);
  void recv(std::uint32_t loc, std::uint32_t comm, long sender, std::uint32_t tag,
            std::uint64_t request);
  void isend_complete(std::uint32_t loc, std::uint64_t request);
  void irecv_request(std::uint32_t loc, std::uint64_t request);
  void cancelled(std::uint32_t loc, std::uint64_t request);
  /// After the last event: ends never matched propose nothing.
  void finish();

private:
  static constexpr std::int64_t kUnknown = INT64_MIN;
  /// What a message end keeps of its record.
  struct End {
    std::uint32_t loc = 0;
    bool in_call = false; ///< recorded inside an MPI call: `call` is that call
    bool held = false;    ///< `call` waits for this end's partner
    CallRef call;
    std::int64_t posted = kUnknown; ///< receives: enter of the call that posted it
    SendBlocking blocking = SendBlocking::Never;
  };
  struct Queues {
    std::deque<End> sends, receives;
  };
  auto matched() {
    return [this](const relations::MessageEnd<End>& e) { queue(e); };
  }
  End end_at(std::uint32_t loc) const;
  void queue(const relations::MessageEnd<End>& e);
  void pair(std::uint32_t comm, const End& send, const End& recv);

  const RunLayout& layout_;
  MpiCalls& calls_;
  std::map<std::uint32_t, SendBlocking> send_blocking_; ///< by region
  std::vector<relations::PostedMessages<End>> posted_;  ///< by location
  /// By location: open MpiIrecvRequests, request -> enter of the call that posted it.
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> irecv_posted_;
  /// Per channel the message ends whose partner is not seen yet; a channel stays once seen
  /// (there are few, and a program uses them again and again).
  std::map<relations::P2pChannel, Queues> channels_;
};

} // namespace htrace::analysis::detail
#endif
