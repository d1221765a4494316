// Wait at Barrier, Wait at N x N, Late Broadcast, Early Reduce and Early Scan: the waits of
// blocking MPI collectives. Calls are paired and numbered into instances as htrace-correct does
// (relations/collective_calls.h, relations/collective_bounds.h: a process's n-th call on a
// communicator joins the communicator's n-th instance); once every member's call is known, each
// member's call gets a candidate wait from its enter to the enter of the member it waited for
// (pattern_rules.h says which). Non-blocking collectives are numbered but wait for nothing here.
// Memory: the instances some member has not reached yet.
#ifndef HTRACE_ANALYSIS_COLLECTIVE_WAITS_H
#define HTRACE_ANALYSIS_COLLECTIVE_WAITS_H

#include "mpi_calls.h"
#include "relations/collective_bounds.h"
#include "relations/collective_calls.h"

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
  // The handles relations::CollectiveCalls carries: a blocking call's number among its
  // location's MPI calls, or one of these.
  static constexpr relations::Event kOutsideCall = -1, kNonBlocking = -2;

  struct Member {
    bool seen = false;
    bool timed = false; ///< a blocking call: `call` is known and held
    bool waits = false; ///< data reaches it (format::collective_end_waits)
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
  MpiCalls& calls_;
  std::vector<relations::CollectiveCalls> located_;              ///< by location
  std::vector<relations::CollectiveNumbering> numbering_;        ///< by process
  std::vector<std::unordered_map<std::uint64_t, CallRef>> held_; ///< by location: call number
  std::map<std::pair<std::uint32_t, std::uint64_t>, Instance> instances_; ///< comm, number
};

} // namespace htrace::analysis::detail
#endif
