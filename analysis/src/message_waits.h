// Late Sender and Late Receiver: the waits of point-to-point messages. Message ends are matched
// as htrace-correct matches them (relations/p2p_messages.h: per channel, the k-th send posted
// with the k-th receive posted); each matched pair proposes
//  - to the call that completed the receive (MPI_Recv, MPI_Sendrecv, the MPI_Wait* or MPI_Test*
//    of an MPI_Irecv): a Late Sender wait from its enter to the enter of the send's call;
//  - to a blocking send's call (pattern_rules.h): a Late Receiver wait from its enter to the
//    enter of the call that posted the receive (MPI_Recv, MPI_Irecv).
// A Late Sender wait is also wrong order when another message to the same process, whose send was
// entered before the late send's, is received later (its receive record comes later in time) or
// never. That is decided whatever order the locations are read in, once every receive of the
// process recorded before this one is matched, every event before the receive is read (advance())
// and every send entered before the late send's is read: every call that may record a send and
// was entered before it has recorded its send or left. Memory: the ends behind open requests, the
// messages one side of which is not seen yet, the sends in flight per receiving process, and the
// messages and waits matched after a receive not yet decided.
#ifndef HTRACE_ANALYSIS_MESSAGE_WAITS_H
#define HTRACE_ANALYSIS_MESSAGE_WAITS_H

#include "mpi_calls.h"
#include "pattern_rules.h"
#include "relations/fifo.h"
#include "relations/location_channels.h"
#include "relations/p2p_messages.h"
#include "relations/ref_index.h"

#include <map>
#include <memory_resource>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace htrace::analysis::detail {

class MessageWaits {
public:
  MessageWaits(const RunLayout& layout, MpiCalls& calls);
  /// Enters and leaves: a call that may record a send holds back the wrong-order decisions of
  /// sends entered after it until it has recorded its send or left.
  void enter(std::uint32_t loc, std::int64_t t, std::uint32_t region);
  void leave(std::uint32_t loc, std::int64_t t);
  /// The events come in time order: each one's time says every event before it is read.
  void read_in_time_order() { in_time_order_ = true; }
  void send(std::uint32_t loc, std::uint32_t comm, long receiver, std::uint32_t tag,
            std::uint64_t request);
  void recv(std::uint32_t loc, std::int64_t t, std::uint32_t comm, long sender, std::uint32_t tag,
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
  /// Every event before `t` is read: decides the wrong-order waits that waited for that.
  void advance(std::int64_t t);
  /// After the last event: ends never matched propose nothing.
  void finish();

private:
  static constexpr std::int64_t kUnknown = INT64_MIN;
  static constexpr std::int64_t kNoCall = INT64_MAX;
  /// A receive record's place among its process's: by time, then location, then its place on
  /// its location; the same whatever order the locations are read in.
  struct RecvKey {
    std::int64_t time = INT64_MIN;
    std::uint32_t loc = 0;
    std::uint64_t n = 0;
    friend bool operator<(const RecvKey& a, const RecvKey& b) {
      return std::tie(a.time, a.loc, a.n) < std::tie(b.time, b.loc, b.n);
    }
  };
  static constexpr RecvKey kLastKey{INT64_MAX, UINT32_MAX, UINT64_MAX};
  /// What a message end keeps of its record.
  struct End {
    std::uint32_t loc = 0;
    bool in_call = false; ///< recorded inside an MPI call: `call` is that call
    bool held = false;    ///< `call` waits for this end's partner
    CallRef call;
    std::int64_t posted = kUnknown; ///< receives: enter of the call that posted it
    SendBlocking blocking = SendBlocking::Never;
    std::uint64_t flight = 0; ///< sends in a call: its key in in_flight_ (0: none)
    RecvKey key;              ///< receives: its place among its process's receive records
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
  /// Whether a message to `dst` sent before `send_enter` is still in flight or was received
  /// after every receive decided so far.
  bool wrong_order(std::uint32_t dst, std::int64_t send_enter) const;
  void read_to(std::int64_t t) {
    if (in_time_order_ && t > read_before_) read_before_ = t;
  }
  /// `loc`'s open call has recorded its send.
  void sent(std::uint32_t loc);
  /// Every send entered before this time is read.
  std::int64_t sends_before();
  /// A call that may send but has not recorded its send while kGiveUpAfter enters per location
  /// were read (a location whose trace ends inside it, or a tracer that records sends late)
  /// holds back no decision: else every later wait would be held to the end.
  bool given_up(std::uint32_t loc) const { return enters_ - sending_at_[loc] > give_up_after_; }
  /// Decides the wrong-order candidates of `dst` that can be (all of them with `all`), in
  /// receive order, then forgets the matched messages none can need.
  void decide(std::uint32_t dst, bool all = false);

  const RunLayout& layout_;
  MpiCalls& calls_;
  std::map<std::uint32_t, SendBlocking> send_blocking_; ///< by region
  relations::RefSet sending_regions_;                   ///< calls that may record sends
  relations::RefSet one_send_regions_;                  ///< of those, the ones that record one
  /// By location: the enter of its open call that may still record a send (kNoCall: none).
  std::vector<std::int64_t> sending_since_;
  std::size_t sending_ = 0; ///< locations in such a call
  bool in_time_order_ = false;
  /// In time order: (enter, location) of such calls as they are entered, some no longer open.
  relations::Fifo<std::pair<std::int64_t, std::uint32_t>> open_sends_;
  /// Receive records so far, by location.
  std::vector<std::uint64_t> receives_;
  const RecvKey* recording_ = nullptr;    ///< the receive being recorded
  bool matched_now_ = false;              ///< it was matched as it was recorded
  std::int64_t read_before_ = INT64_MIN;  ///< every event before this time is read
  std::int64_t sends_before_ = INT64_MIN; ///< not in time order: as of the last advance()
  static constexpr std::uint64_t kGiveUpAfter = 64;
  std::uint64_t give_up_after_;           ///< kGiveUpAfter enters per location
  std::uint64_t enters_ = 0;              ///< enters read
  std::vector<std::uint64_t> sending_at_; ///< by location: enters_ when its sending call began
  std::vector<relations::PostedMessages<End>> posted_; ///< by location
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
  /// A Late Sender wait whose wrong order is not decided yet.
  struct Undecided {
    std::int64_t send_enter;
    CallRef call;
    Candidate wait;
  };
  /// What a receiving process's wrong-order decisions need, in one record (a receive and the
  /// match of a message to the process touch most of it; apart, each missed the cache): the
  /// sends in a call recorded and not yet matched, earliest enter first; the receives not yet
  /// matched, and the messages (receive -> send's enter) matched after an undecided wait's
  /// receive; the undecided waits by receive.
  struct Arrivals {
    explicit Arrivals(std::pmr::memory_resource* nodes)
        : in_flight(nodes), unmatched(nodes), landed(nodes), landed_enters(nodes),
          undecided(nodes) {}
    std::pmr::set<Flight> in_flight;
    std::pmr::set<RecvKey> unmatched;
    std::pmr::multimap<RecvKey, std::int64_t> landed;
    std::pmr::multiset<std::int64_t> landed_enters; ///< landed's send enters, earliest first
    std::pmr::map<RecvKey, Undecided> undecided;
    bool listed = false;       ///< in undecided_at_
    bool one_location = false; ///< the process has one location
    /// Forgets the landed messages before `end`.
    void forget_landed(decltype(landed)::iterator end);
  };
  /// The nodes of every process' Arrivals: a window's messages are added and forgotten in
  /// batches, which a pool serves without the allocator's own bookkeeping.
  std::pmr::unsynchronized_pool_resource arrival_nodes_;
  std::vector<Arrivals> arrivals_;
  /// The receiving processes with undecided waits (or none left since the last advance()), each
  /// once.
  std::vector<std::uint32_t> undecided_at_;
};

} // namespace htrace::analysis::detail
#endif
