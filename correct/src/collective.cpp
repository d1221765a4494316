#include "correct/collective.h"

#include <algorithm>

namespace htrace::correct {
namespace {

// The aggregates below assume intra <= inter (members on other nodes get the larger l_min); an
// archive or command line with intra > inter uses inter for both inside a collective. Every rule
// uses this one pair latency, so forward bounds and backward limits agree.
int64_t intra_lmin(const Latencies& l) {
  return std::min(l.intra, l.inter);
}
int64_t pair_lmin(uint32_t process_a, uint32_t process_b, const Latencies& l) {
  return l.same_node(process_a, process_b) ? intra_lmin(l) : l.inter;
}
uint64_t node_of(const CollectiveMember& m, const Latencies& l) {
  return l.defs->processes[m.process].node;
}
int64_t plus(int64_t v, int64_t d) {
  return v == kNoTime ? kNoTime : v + d;
}
// Largest value among members other than m: other nodes with inter, own node with intra.
int64_t max_excluding(const Top2& by_node, const Top2& by_process, const CollectiveMember& m,
                      const Latencies& l) {
  return std::max(plus(by_node.excluding(node_of(m, l)), l.inter),
                  plus(by_process.excluding(m.process), intra_lmin(l)));
}

} // namespace

CollectiveInstance::PrefixEntry& CollectiveInstance::prefix_entry(const CollectiveMember& m) {
  for (PrefixEntry& e : prefix)
    if (e.rank == m.rank) return e;
  prefix.push_back({m.rank, m.process, kNoTime, kNoTime, kNoTime});
  return prefix.back();
}

void CollectiveInstance::add_begin(const CollectiveMember& m, int64_t begin, int64_t input,
                                   const Latencies& l) {
  uint64_t node = node_of(m, l);
  begin_by_node.add(begin, node);
  begin_by_process.add(begin, m.process);
  input_by_node.add(input, node);
  input_by_process.add(input, m.process);
  if (m.rank == root) {
    root_begin = std::max(root_begin, begin), root_input = input, root_process = m.process;
  }
  if (pattern == format::CollectivePattern::Prefix) {
    PrefixEntry& e = prefix_entry(m);
    e.begin = std::max(e.begin, begin), e.input = input;
  }
}

void CollectiveInstance::add_input(const CollectiveMember& m, int64_t input, const Latencies& l) {
  input_by_node.add(input, node_of(m, l));
  input_by_process.add(input, m.process);
  if (m.rank == root) root_input = input, root_process = m.process;
  if (pattern == format::CollectivePattern::Prefix) prefix_entry(m).input = input;
}

void CollectiveInstance::add_end(const CollectiveMember& m, int64_t end, const Latencies& l) {
  end_neg_by_node.add(-end, node_of(m, l));
  end_neg_by_process.add(-end, m.process);
  if (m.rank == root) root_end = end, root_process = m.process;
  if (pattern == format::CollectivePattern::Prefix) prefix_entry(m).end = end;
}

int64_t CollectiveInstance::end_bound(const CollectiveMember& m, const Latencies& l,
                                      bool input) const {
  switch (pattern) {
  case format::CollectivePattern::AllToAll:
    return input ? max_excluding(input_by_node, input_by_process, m, l)
                 : max_excluding(begin_by_node, begin_by_process, m, l);
  case format::CollectivePattern::NToOne:
    if (m.rank != root) return kNoTime;
    return input ? max_excluding(input_by_node, input_by_process, m, l)
                 : max_excluding(begin_by_node, begin_by_process, m, l);
  case format::CollectivePattern::OneToN: {
    if (m.rank == root) return kNoTime;
    return plus(input ? root_input : root_begin, root_lmin(m, l));
  }
  case format::CollectivePattern::Prefix: {
    int64_t bound = kNoTime;
    for (const PrefixEntry& e : prefix) {
      int64_t v = input ? e.input : e.begin;
      if (e.rank < m.rank && v != kNoTime)
        bound = std::max(bound, v + pair_lmin(e.process, m.process, l));
    }
    return bound;
  }
  }
  return kNoTime;
}

int64_t CollectiveInstance::begin_upper_bound(const CollectiveMember& m, const Latencies& l) const {
  auto from_neg = [](int64_t neg) { return neg == kNoTime ? kUnbounded : -neg; };
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
    int64_t ub = kUnbounded;
    for (const PrefixEntry& e : prefix)
      if (e.rank > m.rank && e.end != kNoTime)
        ub = std::min(ub, e.end - pair_lmin(m.process, e.process, l));
    return ub;
  }
  }
  return kUnbounded;
}

int64_t CollectiveInstance::root_lmin(const CollectiveMember& m, const Latencies& l) const {
  return root_process == UINT32_MAX ? l.inter : pair_lmin(root_process, m.process, l);
}

} // namespace htrace::correct
