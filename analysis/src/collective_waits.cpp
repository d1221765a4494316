#include "collective_waits.h"

#include "format/collective_rules.h"
#include "pattern_rules.h"

#include <algorithm>

namespace htrace::analysis::detail {

CollectiveWaits::CollectiveWaits(const RunLayout& layout, MpiCalls& calls)
    : layout_(layout), comms_(layout.comm_members), calls_(calls),
      located_(layout.process_of.size()), held_(layout.process_of.size()),
      nbc_starts_(layout.process_of.size()) {
  std::uint32_t processes = 0;
  for (std::uint32_t p : layout.process_of)
    processes = std::max(processes, p + 1);
  numbering_.resize(processes);
}

bool CollectiveWaits::in_neighborhood_collective(std::uint32_t loc) const {
  const auto call = calls_.current(loc);
  if (!call) return false;
  auto r = layout_.regions.find(call->region);
  return r != layout_.regions.end() && r->second.cls.neighborhood;
}

// The handle of a blocking call's record; `hold`: its call waits for the instance.
relations::Event CollectiveWaits::handle(std::uint32_t loc, bool hold) {
  auto call = calls_.current(loc);
  if (!call) return kOutsideCall;
  if (hold) {
    calls_.hold(*call);
    Held& h = held_[loc][call->number];
    h.call = *call;
    ++h.relations; // MPI_Waitall may complete several
  }
  return static_cast<relations::Event>(call->number);
}

void CollectiveWaits::begin(std::uint32_t loc) {
  located_[loc].begin(handle(loc, false), in_neighborhood_collective(loc));
}

void CollectiveWaits::end(std::uint32_t loc, std::uint8_t op, std::uint32_t comm,
                          std::uint32_t root, std::uint64_t received) {
  // Neighbourhood collectives are never handed out: their calls wait for nothing.
  const relations::Event h = handle(loc, !in_neighborhood_collective(loc));
  located_[loc].end(h, op, comm, root, received, add_member(loc));
}

void CollectiveWaits::nbc_request(std::uint32_t loc, std::uint64_t request) {
  const bool neighborhood = in_neighborhood_collective(loc);
  const auto call = calls_.current(loc);
  relations::Event h = kOutsideCall;
  if (call && !neighborhood) {
    const std::uint64_t i = next_start_++;
    nbc_starts_[loc][i] = call->enter;
    h = kFirstStart - static_cast<relations::Event>(i);
  }
  located_[loc].request(h, request, neighborhood);
}

void CollectiveWaits::nbc_complete(std::uint32_t loc, std::uint8_t op, std::uint32_t comm,
                                   std::uint32_t root, std::uint64_t received,
                                   std::uint64_t request) {
  // A completion inside a neighbourhood collective's call cannot be told from that call's own
  // records: it waits for nothing, as blocking ones do.
  const relations::Event h = handle(loc, !in_neighborhood_collective(loc));
  located_[loc].complete(h, op, comm, root, received, request, add_member(loc));
}

void CollectiveWaits::add_member(std::uint32_t loc, const relations::CollectiveCall& c) {
  Member m;
  m.seen = true;
  m.loc = loc;
  m.waits = format::collective_end_waits(c.op, c.received);
  if (c.end >= 0) {
    auto it = held_[loc].find(static_cast<std::uint64_t>(c.end));
    if (it != held_[loc].end()) {
      m.timed = true;
      m.call = it->second.call;
      if (--it->second.relations == 0) held_[loc].erase(it);
    }
  }
  if (c.begin <= kFirstStart) { // non-blocking: it started where its request's call was entered
    auto& starts = nbc_starts_[loc];
    auto it = starts.find(static_cast<std::uint64_t>(kFirstStart - c.begin));
    if (it != starts.end()) {
      m.started = true;
      m.start = it->second;
      starts.erase(it);
    }
  } else if (m.timed) { // blocking: where its call was entered
    m.started = true;
    m.start = m.call.enter;
  }
  auto done = [&] {
    if (m.timed) calls_.settle(m.call, nullptr);
  };
  const std::uint32_t process = layout_.process_of[loc];
  const std::vector<std::uint32_t>* comm = comms_.find(c.comm);
  if (!comm || comm->size() < 2) return done();
  const auto& members = *comm;
  const std::size_t rank = ranks_.rank(c.comm, members.size(), process, [&](std::size_t r) {
    return layout_.process_of[members[r]];
  });
  if (rank == members.size()) return done();

  const std::uint64_t number = numbering_[process].next(c.comm);
  auto it = instances_.try_emplace({c.comm, number}).first;
  Instance& inst = it->second;
  if (inst.members.empty()) {
    inst.members.resize(members.size());
    inst.op = c.op;
    inst.root = c.root;
  }
  if (inst.members[rank].seen) return done(); // another thread of the process: not a member
  inst.members[rank] = m;
  if (++inst.seen < inst.members.size()) return;
  evaluate(c.comm, inst);
  instances_.erase(it);
}

// Scalasca's definitions (analysis/README.md); each candidate is bounded by the waiting call
// later (MpiCalls).
void CollectiveWaits::evaluate(std::uint32_t comm, const Instance& inst) {
  const auto& ms = inst.members;
  const std::size_t n = ms.size();
  std::vector<std::optional<Candidate>> waits(n);
  const bool all_started =
      std::all_of(ms.begin(), ms.end(), [](const Member& m) { return m.started; });
  // A member waits in the call that completes it, from that call's enter to the partner's start.
  auto wait_for = [&](WaitPattern p, const Member& waiter, const Member& partner) {
    return Candidate{p, partner.loc, partner.start - waiter.call.enter, comm};
  };
  const auto pattern = collective_wait_pattern(inst.op);
  const bool rooted = inst.root < n && ms[inst.root].started;
  switch (pattern.value_or(WaitPattern::LateSender)) {
  case WaitPattern::WaitAtBarrier:
  case WaitPattern::WaitAtNxN:
    if (all_started) {
      const Member& last = *std::max_element(ms.begin(), ms.end(),
                                             [](auto& a, auto& b) { return a.start < b.start; });
      for (std::size_t r = 0; r < n; ++r)
        waits[r] = wait_for(*pattern, ms[r], last);
    }
    break;
  case WaitPattern::LateBroadcast:
    for (std::size_t r = 0; r < n && rooted; ++r)
      if (r != inst.root) waits[r] = wait_for(*pattern, ms[r], ms[inst.root]);
    break;
  case WaitPattern::EarlyReduce:
    if (all_started) {
      const Member* first = nullptr;
      for (std::size_t r = 0; r < n; ++r)
        if (r != inst.root && (!first || ms[r].start < first->start)) first = &ms[r];
      waits[inst.root] = wait_for(*pattern, ms[inst.root], *first);
    }
    break;
  case WaitPattern::EarlyScan: {
    const Member* latest = nullptr; // the last to start among ranks below r
    for (std::size_t r = 0; r < n && ms[r].started; ++r) {
      if (latest) waits[r] = wait_for(*pattern, ms[r], *latest);
      if (!latest || ms[r].start > latest->start) latest = &ms[r];
    }
    break;
  }
  case WaitPattern::LateSender: // not a collective pattern: the operation has none
  case WaitPattern::LateSenderWrongOrder:
  case WaitPattern::LateReceiver:
  case WaitPattern::OmpExplicitBarrier:
  case WaitPattern::OmpImplicitBarrier:
  case WaitPattern::OmpCriticalContention:
  case WaitPattern::OmpLockContention:
  case WaitPattern::OmpIdleThreads:
    break;
  }
  for (std::size_t r = 0; r < n; ++r)
    if (ms[r].timed) calls_.settle(ms[r].call, ms[r].waits && waits[r] ? &*waits[r] : nullptr);
}

void CollectiveWaits::finish() {
  for (std::uint32_t loc = 0; loc < located_.size(); ++loc)
    located_[loc].finish(add_member(loc));
  for (const auto& [key, inst] : instances_)
    for (const Member& m : inst.members)
      if (m.timed) calls_.settle(m.call, nullptr);
  instances_.clear();
  for (auto& calls : held_)
    for (const auto& [number, h] : calls)
      for (std::uint32_t i = 0; i < h.relations; ++i)
        calls_.settle(h.call, nullptr);
  held_.clear();
  nbc_starts_.clear();
}

} // namespace htrace::analysis::detail
