// The clock condition of one collective instance, as htrace-correct and htrace-report both
// evaluate it: which members' ends depend on which members' begins (format::collective_pattern:
// N:N, 1:N, N:1, prefix) and the bounds that follow. The begins (and, backward, the ends) are
// aggregated as they arrive, maxima by node and by process, so a bound costs O(1) per member
// instead of O(members) (prefix patterns keep one entry per member).
#ifndef HTRACE_RELATIONS_COLLECTIVE_BOUNDS_H
#define HTRACE_RELATIONS_COLLECTIVE_BOUNDS_H

#include "format/collective_rules.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace htrace::relations {

/// No time: a bound that constrains nothing, a value not known yet.
constexpr std::int64_t kNoTime = std::numeric_limits<std::int64_t>::min();
/// An upper bound that constrains nothing (a contribution nobody receives).
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max();

/// Largest two contributions with distinct sources, so a receiver can exclude its own one. Values
/// of one source may be raised again (htrace-correct's parallel replay refines values upwards).
struct Top2 {
  std::int64_t v1 = kNoTime, v2 = kNoTime;
  std::uint64_t s1 = UINT64_MAX, s2 = UINT64_MAX;
  void add(std::int64_t v, std::uint64_t source) {
    if (v > v1) {
      if (s1 != source) v2 = v1, s2 = s1;
      v1 = v, s1 = source;
    } else if (source != s1 && v > v2) {
      v2 = v, s2 = source;
    }
  }
  std::int64_t excluding(std::uint64_t source) const { return source == s1 ? v2 : v1; }
  /// The source of excluding(source) (UINT64_MAX while it is kNoTime).
  std::uint64_t source_excluding(std::uint64_t source) const { return source == s1 ? s2 : s1; }
  std::int64_t max() const { return v1; }
};

/// Minimum latencies of MPI messages: within a node and between nodes. The aggregates assume
/// intra <= inter (members on other nodes get the larger l_min); a pair with intra > inter uses
/// inter for both inside a collective. Every rule uses this one pair latency, so forward bounds
/// and backward limits agree.
struct MpiLatencies {
  std::int64_t intra = 0, inter = 0;
  std::int64_t within_node() const { return std::min(intra, inter); }
  std::int64_t between(std::uint64_t node_a, std::uint64_t node_b) const {
    return node_a == node_b ? within_node() : inter;
  }
};

struct CollectiveMember {
  std::uint32_t rank = 0;    ///< in the communicator
  std::uint32_t process = 0; ///< the caller's process index
  std::uint64_t node = 0;    ///< the caller's node id (the process's, where nodes are unknown)
};

class CollectiveBounds {
public:
  format::CollectivePattern pattern = format::CollectivePattern::AllToAll;
  std::uint32_t root = 0; ///< communicator rank

  /// A member's begin: `begin` as corrected, `input` as it was (maxima are kept).
  void add_begin(const CollectiveMember& m, std::int64_t begin, std::int64_t input) {
    begin_by_node.add(begin, m.node);
    begin_by_process.add(begin, m.process);
    add_input(m, input);
    if (m.rank == root) root_begin = std::max(root_begin, begin);
    if (pattern == format::CollectivePattern::Prefix) {
      PrefixEntry& e = prefix_entry(m);
      e.begin = std::max(e.begin, begin);
    }
  }
  /// A begin's input time alone (the corrected value comes later with add_begin).
  void add_input(const CollectiveMember& m, std::int64_t input) {
    input_by_node.add(input, m.node);
    input_by_process.add(input, m.process);
    if (m.rank == root) {
      root_input = input, root_node = m.node, has_root_node = true;
      root_process = m.process, has_root_process = true;
    }
    if (pattern == format::CollectivePattern::Prefix) prefix_entry(m).input = input;
  }
  /// Backward: a member's end.
  void add_end(const CollectiveMember& m, std::int64_t end) {
    end_neg_by_node.add(-end, m.node);
    end_neg_by_process.add(-end, m.process);
    if (m.rank == root) root_end = end, root_node = m.node, has_root_node = true;
    if (pattern == format::CollectivePattern::Prefix) prefix_entry(m).end = end;
  }

  /// Earliest allowed end of member m (kNoTime: unconstrained); `input` uses input begins.
  std::int64_t end_bound(const CollectiveMember& m, const MpiLatencies& l,
                         bool input = false) const {
    const Top2& by_node = input ? input_by_node : begin_by_node;
    const Top2& by_process = input ? input_by_process : begin_by_process;
    switch (pattern) {
    case format::CollectivePattern::AllToAll:
      return max_excluding(by_node, by_process, m, l);
    case format::CollectivePattern::NToOne:
      return m.rank == root ? max_excluding(by_node, by_process, m, l) : kNoTime;
    case format::CollectivePattern::OneToN:
      return m.rank == root ? kNoTime : plus(input ? root_input : root_begin, root_lmin(m, l));
    case format::CollectivePattern::Prefix: {
      std::int64_t bound = kNoTime;
      for (const PrefixEntry& e : prefix) {
        const std::int64_t v = input ? e.input : e.begin;
        if (e.rank < m.rank && v != kNoTime) bound = std::max(bound, v + l.between(e.node, m.node));
      }
      return bound;
    }
    }
    return kNoTime;
  }

  /// The begin (as input) that bounds member m's end most: the latest begin of a member whose
  /// begin m's end depends on, and that member's process (begin kNoTime: m's end depends on none).
  struct Dependency {
    std::int64_t begin = kNoTime;
    std::uint32_t process = 0;
  };
  Dependency latest_input_dependency(const CollectiveMember& m) const {
    const auto latest_other = [&] {
      const std::int64_t v = input_by_process.excluding(m.process);
      return Dependency{v,
                        static_cast<std::uint32_t>(input_by_process.source_excluding(m.process))};
    };
    switch (pattern) {
    case format::CollectivePattern::AllToAll:
      return latest_other();
    case format::CollectivePattern::NToOne:
      return m.rank == root ? latest_other() : Dependency{};
    case format::CollectivePattern::OneToN:
      return m.rank == root || !has_root_process ? Dependency{}
                                                 : Dependency{root_input, root_process};
    case format::CollectivePattern::Prefix: {
      Dependency d;
      for (const PrefixEntry& e : prefix)
        if (e.rank < m.rank && e.input != kNoTime && e.input > d.begin) d = {e.input, e.process};
      return d;
    }
    }
    return {};
  }

  /// Latest allowed begin of member m (kUnbounded: unconstrained).
  std::int64_t begin_upper_bound(const CollectiveMember& m, const MpiLatencies& l) const {
    auto from_neg = [](std::int64_t neg) { return neg == kNoTime ? kUnbounded : -neg; };
    switch (pattern) {
    case format::CollectivePattern::AllToAll:
      return from_neg(max_excluding(end_neg_by_node, end_neg_by_process, m, l));
    case format::CollectivePattern::OneToN:
      if (m.rank != root) return kUnbounded;
      return from_neg(max_excluding(end_neg_by_node, end_neg_by_process, m, l));
    case format::CollectivePattern::NToOne:
      if (m.rank == root || root_end == kNoTime) return kUnbounded;
      return root_end - root_lmin(m, l);
    case format::CollectivePattern::Prefix: {
      std::int64_t ub = kUnbounded;
      for (const PrefixEntry& e : prefix)
        if (e.rank > m.rank && e.end != kNoTime)
          ub = std::min(ub, e.end - l.between(m.node, e.node));
      return ub;
    }
    }
    return kUnbounded;
  }

  /// Forward: begins, as corrected and as input, maxima by node and by process.
  Top2 begin_by_node, begin_by_process, input_by_node, input_by_process;

private:
  struct PrefixEntry {
    std::uint32_t rank, process;
    std::uint64_t node;
    std::int64_t begin, input, end;
  };
  static std::int64_t plus(std::int64_t v, std::int64_t d) {
    return v == kNoTime ? kNoTime : v + d;
  }
  /// Largest value among members other than m: other nodes with inter, own node with intra.
  static std::int64_t max_excluding(const Top2& by_node, const Top2& by_process,
                                    const CollectiveMember& m, const MpiLatencies& l) {
    return std::max(plus(by_node.excluding(m.node), l.inter),
                    plus(by_process.excluding(m.process), l.within_node()));
  }
  std::int64_t root_lmin(const CollectiveMember& m, const MpiLatencies& l) const {
    return has_root_node ? l.between(root_node, m.node) : l.inter;
  }
  PrefixEntry& prefix_entry(const CollectiveMember& m) {
    for (PrefixEntry& e : prefix)
      if (e.rank == m.rank) return e;
    prefix.push_back({m.rank, m.process, m.node, kNoTime, kNoTime, kNoTime});
    return prefix.back();
  }

  std::int64_t root_begin = kNoTime, root_input = kNoTime;
  /// Backward: members' ends, negated (maxima of the negation are minima).
  Top2 end_neg_by_node, end_neg_by_process;
  std::int64_t root_end = kNoTime;
  std::uint64_t root_node = 0;
  std::uint32_t root_process = 0;
  bool has_root_node = false, has_root_process = false;
  std::vector<PrefixEntry> prefix; ///< Prefix pattern only
};

/// Numbers one process's collective calls into instances: its n-th call on a communicator (calls
/// in begin order, as CollectiveCalls hands them out) takes part in the communicator's n-th
/// instance, as the n-th call of every other member does (MPI: every member issues the
/// collectives of a communicator in the same order).
class CollectiveNumbering {
public:
  std::uint64_t next(std::uint32_t comm) { return next_[comm]++; }

private:
  std::map<std::uint32_t, std::uint64_t> next_;
};

} // namespace htrace::relations
#endif
