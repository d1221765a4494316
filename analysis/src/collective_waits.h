// Wait at Barrier, Wait at N x N, Late Broadcast, Early Reduce and Early Scan: the waits of
// blocking MPI collectives. Calls are paired and numbered into instances as htrace-correct does
// (relations/collective_calls.h, relations/collective_bounds.h: a process's n-th call on a
// communicator joins the communicator's n-th instance); once every member's call is known, each
// member's call gets a candidate wait from its enter to the enter of the member it waited for
// (pattern_rules.h says which). A non-blocking collective starts where its request's call
// (MPI_Iallreduce, ...) was entered, and the call that completes it (MPI_Wait, ...) waits: from
// its enter to the start of the member it waits for. Memory: the instances some member has not
// reached yet, the starts of non-blocking collectives not yet completed.
#ifndef HTRACE_ANALYSIS_COLLECTIVE_WAITS_H
#define HTRACE_ANALYSIS_COLLECTIVE_WAITS_H

#include "mpi_calls.h"
#include "relations/collective_bounds.h"
#include "relations/collective_calls.h"
#include "relations/member_ranks.h"
#include "relations/ref_index.h"

#include <map>
#include <unordered_map>
#include <vector>

namespace htrace::analysis::detail {

class CollectiveWaits {
public:
  CollectiveWaits(const RunLayout& layout, MpiCalls& calls);
  void begin(std::uint32_t loc);
  void end(std::uint32_t loc, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
           std::uint64_t received);
  void nbc_request(std::uint32_t loc, std::uint64_t request);
  void nbc_complete(std::uint32_t loc, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                    std::uint64_t received, std::uint64_t request);
  /// After the last event: instances some member never reached propose nothing.
  void finish();

private:
  // The handles relations::CollectiveCalls carries: an MPI call's number among its location's
  // MPI calls, kOutsideCall, or for a non-blocking request kFirstStart - i, i indexing the
  // location's nbc_starts_.
  static constexpr relations::Event kOutsideCall = -1, kFirstStart = -2;

  struct Member {
    bool seen = false;
    bool timed = false;   ///< the call that completes it (`call`) is known and held: it can wait
    bool started = false; ///< `start` is known: others can wait for it
    bool waits = false;   ///< data reaches it (format::collective_end_waits)
    std::uint32_t loc = 0;
    std::int64_t start = 0; ///< the enter of its blocking call or of its request's call
    CallRef call;
  };
  struct Instance {
    std::uint8_t op = 0;
    std::uint32_t root = 0;
    std::size_t seen = 0;
    std::vector<Member> members; ///< by communicator rank
  };
  auto add_member(std::uint32_t loc) {
    return [this, loc](const relations::CollectiveCall& c) { add_member(loc, c); };
  }
  void add_member(std::uint32_t loc, const relations::CollectiveCall& c);
  void evaluate(std::uint32_t comm, const Instance& inst);
  relations::Event handle(std::uint32_t loc, bool hold);
  bool in_neighborhood_collective(std::uint32_t loc) const;

  const RunLayout& layout_;
  relations::RefIndex<std::vector<std::uint32_t>> comms_; ///< layout_.comm_members
  MpiCalls& calls_;
  std::vector<relations::CollectiveCalls> located_;       ///< by location
  std::vector<relations::CollectiveNumbering> numbering_; ///< by process
  struct Held {
    CallRef call;
    std::uint32_t relations = 0; ///< collectives it completes not yet handed out
  };
  std::vector<std::unordered_map<std::uint64_t, Held>> held_; ///< by location: call number
  std::map<std::pair<std::uint32_t, std::uint64_t>, Instance> instances_; ///< comm, number
  relations::MemberRanks ranks_;                                          ///< by process
  /// By location: the enter of each open non-blocking request's call, by index.
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> nbc_starts_;
  std::uint64_t next_start_ = 0;
};

} // namespace htrace::analysis::detail
#endif
