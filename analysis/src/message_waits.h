// Late Sender and Late Receiver: the waits of point-to-point messages. Message ends are matched
// as htrace-correct matches them (relations/p2p_messages.h: per channel, the k-th send posted
// with the k-th receive posted); each matched pair proposes
//  - to the call that completed the receive (MPI_Recv, MPI_Sendrecv, the MPI_Wait* or MPI_Test*
//    of an MPI_Irecv): a Late Sender wait from its enter to the enter of the send's call;
//  - to a blocking send's call (pattern_rules.h): a Late Receiver wait from its enter to the
//    enter of the call that posted the receive (MPI_Recv, MPI_Irecv).
// A Late Sender wait is also wrong order when a message to the same process whose send was entered
// before the late send's is received later: decided once every receive recorded before this one
// is matched, a message still unmatched then, or matched with a receive recorded after this one
// (matching follows posting order). Memory: the ends behind open requests, the messages one side
// of which is not seen yet, the sends in flight per receiving process, and the messages and
// waits matched ahead of a receive recorded before them.
#ifndef HTRACE_ANALYSIS_MESSAGE_WAITS_H
#define HTRACE_ANALYSIS_MESSAGE_WAITS_H

#include "mpi_calls.h"
#include "pattern_rules.h"
#include "relations/fifo.h"
#include "relations/location_channels.h"
#include "relations/p2p_messages.h"

#include <map>
#include <set>
#include <unordered_map>
#include <utility>
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
  /// `loc`'s next event comes next: fetches the channels it used last, its posting queues (every
  /// message end of the location goes through them) and its process's arrivals.
  void prefetch(std::uint32_t loc) const {
    channel_numbers_.prefetch(loc);
    relations::prefetch_object(posted_[loc]);
    const Arrivals& own = arrivals_[layout_.process_of[loc]]; // what its receives update
    relations::prefetch_span(&own, &own.landed);
  }
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
    std::uint64_t flight = 0; ///< sends in a call: its key in in_flight_ (0: none)
    std::uint64_t seq = 0;    ///< receives: its number among its process's receive records
  };
  /// A send in flight: its call's enter, a number that tells equal enters apart.
  using Flight = std::pair<std::int64_t, std::uint64_t>;
  struct Queues {
    relations::Fifo<End> sends, receives;
  };
  auto matched() {
    return [this](const relations::MessageEnd<End>& e) { queue(e); };
  }
  End end_at(std::uint32_t loc) const;
  void queue(const relations::MessageEnd<End>& e);
  void pair(const relations::P2pChannel& ch, const End& send, const End& recv);
  void land(std::uint32_t dst, const End& send, const End& recv);
  bool wrong_order(std::uint32_t dst, std::int64_t send_enter, std::uint64_t seq) const;
  /// Decides the wrong-order candidates of `dst` whose receives were recorded before every
  /// unmatched one (all of them with `all`), then forgets the matched messages none can need.
  void decide(std::uint32_t dst, bool all = false);

  const RunLayout& layout_;
  MpiCalls& calls_;
  std::map<std::uint32_t, SendBlocking> send_blocking_; ///< by region
  std::vector<relations::PostedMessages<End>> posted_;  ///< by location
  /// By location: open MpiIrecvRequests, request -> enter of the call that posted it.
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> irecv_posted_;
  /// Per channel the message ends whose partner is not seen yet; a channel stays once seen (a
  /// program uses them again and again).
  relations::LocationChannels channel_numbers_;
  std::vector<Queues> channels_; ///< by channel number
  /// By location: the open MpiIsends in flight, request -> receiving process and key (a cancelled
  /// one never arrives).
  std::vector<std::unordered_map<std::uint64_t, std::pair<std::uint32_t, Flight>>> isend_flight_;
  std::uint64_t flights_ = 0;
  /// A Late Sender wait whose wrong order is decided once every receive of its process recorded
  /// before its own is matched (until then such a receive may take a message sent earlier).
  struct Undecided {
    std::int64_t send_enter;
    CallRef call;
    Candidate wait;
  };
  /// What a receiving process's wrong-order decisions need, in one record (a receive and the
  /// match of a message to the process touch most of it; apart, each missed the cache): the
  /// sends in a call recorded and not yet matched, earliest enter first; receive records so
  /// far, the numbers of those not yet matched, and the messages (receive number -> send's
  /// enter) matched while a receive recorded earlier was not; the undecided waits by receive
  /// number.
  struct Arrivals {
    std::uint64_t receives = 0;
    std::set<Flight> in_flight;
    std::multiset<std::uint64_t> unmatched;
    std::multimap<std::uint64_t, std::int64_t> landed;
    std::multimap<std::uint64_t, Undecided> undecided;
  };
  std::vector<Arrivals> arrivals_; ///< by receiving process
};

} // namespace htrace::analysis::detail
#endif
