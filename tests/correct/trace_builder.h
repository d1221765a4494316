// Traces built by hand for unit tests of the replay: processes and their locations with the input
// times of their events, and the logical messages between events. Builds the definitions every
// correction rank shares and the LocalModel one correction rank would read for its processes from
// an archive (the links and channels the model reader makes of the records), without an archive.
#ifndef HTRACE_TESTS_CORRECT_TRACE_BUILDER_H
#define HTRACE_TESTS_CORRECT_TRACE_BUILDER_H

#include "correct/collective.h"
#include "correct/definitions.h"
#include "correct/model_reader.h"

#include <cstdint>
#include <vector>

namespace htrace::correct::testing {

class TraceBuilder {
public:
  // A new process on compute node `node` with one location; returns the location's index (its
  // OTF2 id too). Collectives span every process: ranks of the world communicator in this order.
  uint32_t process(std::vector<int64_t> times, uint64_t node = 0);
  // Another location (thread) of the process of location `of`.
  uint32_t thread(uint32_t of, std::vector<int64_t> times);

  // A p2p message from event `send` of location `from` to event `recv` of location `to`. Messages
  // of one (sender, receiver, tag) match in event order, as MPI's non-overtaking rule has them.
  void message(uint32_t from, uint32_t send, uint32_t to, uint32_t recv, uint32_t tag = 0);
  // A receive of a message from the process of location `from` that it never sends.
  void receive_only(uint32_t from, uint32_t to, uint32_t recv, uint32_t tag = 0);
  // A send to the process of location `to` that it never receives.
  void send_only(uint32_t from, uint32_t send, uint32_t to, uint32_t tag = 0);

  struct Member {
    uint32_t location, begin, end; // begin: contributes; end: waits for the others
  };
  // One instance of a collective over every process, one member per process in process order.
  // Instances are numbered in the order they are added (MPI's order of issue).
  void collective(format::CollectivePattern pattern, std::vector<Member> members,
                  uint32_t root = 0);

  struct Event {
    uint32_t location, event;
  };
  // An OpenMP parallel region: `fork` of the master to each member's team begin, then each
  // member's team end to `join` of the master (members: the threads other than the master).
  void parallel(Event fork, Event join, std::vector<Event> begins, std::vector<Event> ends);

  const Definitions& definitions() const { return defs_; }
  size_t processes() const { return defs_.processes.size(); }
  size_t locations() const { return defs_.locations.size(); }

  // What correction rank `rank` reads: the locations of the processes `owner` gives it.
  LocalModel model(const std::vector<int>& owner, int rank) const;

private:
  struct LinkSpec {
    uint32_t event;
    LinkRole role;
    ChannelKey key; // Local and Collective channels; P2P: its stream's key (d unused)
    MessageKind kind;
    uint32_t collective; // Collective: index into collectives_
  };
  struct CollectiveSpec {
    format::CollectivePattern pattern;
    uint32_t root;
  };
  void add(uint32_t location, LinkSpec link) { links_[location].push_back(link); }

  Definitions defs_;
  std::vector<std::vector<int64_t>> times_;  // per location
  std::vector<std::vector<LinkSpec>> links_; // per location
  std::vector<CollectiveSpec> collectives_;
  uint64_t regions_ = 0;
};

} // namespace htrace::correct::testing
#endif
