// Collective operations as logical messages: which members' ends depend on which members'
// begins, and the bounds that follow. Each correction rank aggregates the begins (forward) and
// ends (backward) of one collective instance it takes part in, whether the member is its own or
// arrived by message, so a bound costs O(1) per member instead of O(members).
#ifndef HTRACE_CORRECT_COLLECTIVE_H
#define HTRACE_CORRECT_COLLECTIVE_H

#include "correct/latencies.h"
#include "correct/model.h"
#include "format/collective_rules.h"

#include <cstdint>
#include <vector>

namespace htrace::correct {

struct CollectiveMember {
  uint32_t rank = 0;    // in the communicator
  uint32_t process = 0; // index into Definitions::processes
};

struct CollectiveInstance {
  format::CollectivePattern pattern = format::CollectivePattern::AllToAll;
  uint32_t root = 0;        // communicator rank
  uint32_t members = 0;     // communicator size
  uint32_t begins_seen = 0; // members whose begin arrived (each counted once)
  uint32_t channel = 0;     // its channel (ChannelTable::channels index)
  // Forward: begins, as corrected and as input, maxima by node and by process.
  Top2 begin_by_node, begin_by_process, input_by_node, input_by_process;
  int64_t root_begin = kNoTime, root_input = kNoTime;
  // Backward: members' ends, negated (maxima of the negation are minima).
  Top2 end_neg_by_node, end_neg_by_process;
  int64_t root_end = kNoTime;
  uint32_t root_process = UINT32_MAX;
  struct PrefixEntry {
    uint32_t rank, process;
    int64_t begin, input, end;
  };
  std::vector<PrefixEntry> prefix; // Prefix pattern only

  void add_begin(const CollectiveMember& m, int64_t begin, int64_t input, const Latencies& l);
  // A begin's input time alone (the forward value comes later with add_begin).
  void add_input(const CollectiveMember& m, int64_t input, const Latencies& l);
  void add_end(const CollectiveMember& m, int64_t end, const Latencies& l);
  // Earliest allowed end of member m (kNoTime: unconstrained); `input` uses input begins.
  int64_t end_bound(const CollectiveMember& m, const Latencies& l, bool input = false) const;
  // Latest allowed begin of member m (kUnbounded: unconstrained).
  int64_t begin_upper_bound(const CollectiveMember& m, const Latencies& l) const;

private:
  PrefixEntry& prefix_entry(const CollectiveMember& m);
  int64_t root_lmin(const CollectiveMember& m, const Latencies& l) const;
};

} // namespace htrace::correct
#endif
