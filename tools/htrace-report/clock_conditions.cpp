#include "clock_conditions.h"

#include "format/collective_rules.h"
#include "relations/location_cache.h"

#include <algorithm>

namespace htrace::report {

ClockConditions::ClockConditions(const ArchiveDefs& defs)
    : defs_(defs), comms_(defs.comms), instance_numbers_(defs.processes.size()) {
  threads_.reserve(defs.locations.size());
  for (std::uint32_t loc = 0; loc < defs.locations.size(); ++loc)
    threads_.emplace_back(loc);
}

void ClockConditions::count(ConditionCounts& c, std::int64_t t, std::int64_t bound) {
  ++c.messages;
  if (t < bound) {
    ++c.violations;
    c.worst_ns = std::max(c.worst_ns, bound - t);
  }
}

// ---- collectives

bool ClockConditions::in_neighborhood_collective(std::uint32_t loc) const {
  auto r = defs_.regions.find(threads_[loc].last_entered);
  return r != defs_.regions.end() && r->second.cls.neighborhood;
}

void ClockConditions::collective_begin(std::uint32_t loc, std::uint64_t t) {
  threads_[loc].colls.begin(ns(t), in_neighborhood_collective(loc));
}

void ClockConditions::collective(std::uint32_t loc, std::uint64_t t, std::uint8_t op,
                                 std::uint32_t comm, std::uint32_t root, std::uint64_t,
                                 std::uint64_t received) {
  threads_[loc].colls.end(ns(t), op, comm, root, received, add_member(loc));
}

void ClockConditions::nbc_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  threads_[loc].colls.request(ns(t), request, in_neighborhood_collective(loc));
}

void ClockConditions::nbc_complete(std::uint32_t loc, std::uint64_t t, std::uint8_t op,
                                   std::uint32_t comm, std::uint32_t root, std::uint64_t,
                                   std::uint64_t received, std::uint64_t request) {
  threads_[loc].colls.complete(ns(t), op, comm, root, received, request, add_member(loc));
}

// Instances are numbered per communicator in each process's begin order (htrace-correct's
// matching): relations::CollectiveCalls hands a call out once every call begun before it on its
// location is complete.
void ClockConditions::add_member(std::uint32_t process, const relations::CollectiveCall& c) {
  const Comm* comm = comms_.find(c.comm);
  if (!comm || comm->members.size() < 2) return;
  const auto& members = comm->members;
  const std::size_t rank = ranks_.rank(c.comm, members.size(), process, [&](std::size_t r) {
    return defs_.locations[members[r]].process;
  });
  if (rank == members.size()) return;
  const std::uint64_t seq = instance_numbers_[process].next(c.comm);
  auto it = instances_.try_emplace({c.comm, seq}).first;
  CollInstance& inst = it->second;
  if (inst.members.empty()) {
    inst.members.resize(members.size());
    inst.begins.pattern = format::collective_pattern(c.op);
    inst.begins.root = c.root;
  }
  Member& m = inst.members[rank];
  if (m.seen) return;
  m = {c.end, format::collective_end_waits(c.op, c.received), true};
  inst.begins.add_input(member(static_cast<std::uint32_t>(rank), process), c.begin);
  if (++inst.ended < inst.members.size()) return;
  evaluate(c.comm, inst);
  instances_.erase(it);
}

// The bounds of htrace-correct's input times with zero latency.
void ClockConditions::evaluate(std::uint32_t comm, const CollInstance& inst) {
  static constexpr relations::MpiLatencies kZero{};
  const auto& locations = comms_.find(comm)->members; // (its instance was of a known one)
  for (std::uint32_t r = 0; r < inst.members.size(); ++r) {
    const Member& m = inst.members[r];
    if (!m.waits) continue;
    const std::int64_t bound =
        inst.begins.end_bound(member(r, defs_.locations[locations[r]].process), kZero, true);
    if (bound != kNone) count(collectives, m.end, bound);
  }
}

// ---- OpenMP

void ClockConditions::Emit::operator()(relations::Event t, relations::Role role,
                                       const relations::LocalKey& k) const {
  const LocalKey key{cc.defs_.locations[loc].process, k};
  if (role == relations::Role::Contribute)
    cc.contribute(key, loc, t);
  else
    cc.receive(key, loc, t);
}

std::size_t ClockConditions::team_size(std::uint64_t team) const {
  const Comm* comm = team > UINT32_MAX ? nullptr : comms_.find(static_cast<std::uint32_t>(team));
  return comm ? comm->members.size() : 0;
}

void ClockConditions::contribute(const LocalKey& k, std::uint32_t loc, std::int64_t t) {
  local_[k].contributions.emplace_back(loc, t);
  settle(k);
}

void ClockConditions::receive(const LocalKey& k, std::uint32_t loc, std::int64_t t) {
  local_[k].receivers.emplace_back(loc, t);
  settle(k);
}

// A hand-over is complete when every event that takes part in it has been seen: fork and join
// have one event per team member (the team's communicator lists them), a barrier's contributions
// all precede the members' leaves, a lock hand-over is one release and one acquisition.
void ClockConditions::settle(const LocalKey& k) {
  auto it = local_.find(k);
  const LocalChannel& ch = it->second;
  using Sub = relations::LocalSub;
  const Sub kind = k.second.sub;
  const bool team = kind == Sub::Fork || kind == Sub::Join || kind == Sub::Barrier;
  const std::size_t n = team ? team_size(k.second.a) : 0;
  bool complete = false;
  switch (kind) {
  case Sub::Fork:
    complete = n > 0 && !ch.contributions.empty() && ch.receivers.size() + 1 == n;
    break;
  case Sub::Join:
    complete = n > 0 && !ch.receivers.empty() && ch.contributions.size() + 1 == n;
    break;
  case Sub::Barrier:
    complete = n > 0 && ch.receivers.size() == n;
    break;
  case Sub::Lock:
    complete = !ch.receivers.empty() && !ch.contributions.empty();
    break;
  case Sub::Taskwait: // every task created for it has completed
  case Sub::Taskgroup:
    complete = !ch.receivers.empty() && ch.contributions.size() == ch.children;
    break;
  case Sub::Task: // switches are checked as they come once the creation is known
    if (ch.contributions.empty()) return;
    evaluate(ch);
    it->second.receivers.clear();
    complete = ch.completed;
    if (complete) local_.erase(it);
    return;
  }
  if (!complete) return;
  evaluate(ch);
  local_.erase(it);
}

void ClockConditions::evaluate(const LocalChannel& ch) {
  for (const auto& [loc, t] : ch.receivers) {
    std::int64_t bound = kNone;
    for (const auto& [from, u] : ch.contributions)
      if (from != loc) bound = std::max(bound, u);
    if (bound != kNone) count(openmp, t, bound);
  }
}

void ClockConditions::thread_fork(std::uint32_t loc, std::uint64_t t) {
  threads_[loc].omp.fork(ns(t), emit(loc));
}

void ClockConditions::team_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t team) {
  threads_[loc].omp.team_begin(ns(t), team, emit(loc));
}

void ClockConditions::team_end(std::uint32_t loc, std::uint64_t t, std::uint32_t team) {
  threads_[loc].omp.team_end(ns(t), team, emit(loc));
}

void ClockConditions::thread_join(std::uint32_t loc, std::uint64_t t) {
  threads_[loc].omp.join(ns(t), emit(loc));
}

void ClockConditions::prefetch(std::uint32_t loc) {
  const Thread& th = threads_[loc];
  relations::prefetch_span(&th, reinterpret_cast<const char*>(&th.omp) + 64);
}

void ClockConditions::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  static const format::RegionClass kUnknown;
  Thread& th = threads_[loc];
  th.last_entered = region;
  auto r = defs_.regions.find(region);
  th.omp.enter(ns(t), r == defs_.regions.end() ? kUnknown : r->second.cls, emit(loc));
}

void ClockConditions::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) {
  threads_[loc].omp.leave(ns(t), emit(loc));
}

// A completion hands over to its parent's taskwait and to its taskgroup, if it was created in one
// or descends from a task that was; both learn here how many tasks they wait for.
void ClockConditions::task_create(std::uint32_t loc, std::uint64_t t, std::uint32_t team,
                                  std::uint32_t creator, std::uint32_t generation) {
  const relations::TaskCreation c =
      threads_[loc].omp.task_create(ns(t), team, creator, generation, emit(loc));
  const std::uint32_t process = defs_.locations[loc].process;
  const std::pair<std::uint32_t, TaskKey> task{process, c.child};
  TaskInfo info;
  info.wait = {process, c.wait_key()};
  ++local_[info.wait].children;
  if (c.in_group) {
    info.grouped = true;
    info.group = {process, c.group.key()};
  } else if (auto parent = tasks_.find({process, c.parent});
             parent != tasks_.end() && parent->second.grouped) {
    info.grouped = true;
    info.group = parent->second.group;
  }
  if (info.grouped) ++local_[info.group].children;
  auto early = early_.find(task);
  if (early != early_.end()) { // it completed "before" it was created
    const auto [where, when] = early->second;
    early_.erase(early);
    contribute(info.wait, where, when);
    if (info.grouped) contribute(info.group, where, when);
  } else {
    tasks_[task] = info;
  }
}

void ClockConditions::task_switch(std::uint32_t loc, std::uint64_t t, std::uint32_t team,
                                  std::uint32_t creator, std::uint32_t generation) {
  threads_[loc].omp.task_switch(ns(t), team, creator, generation, emit(loc));
}

void ClockConditions::task_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t team,
                                    std::uint32_t creator, std::uint32_t generation) {
  threads_[loc].omp.task_complete(ns(t), emit(loc));
  const std::uint32_t process = defs_.locations[loc].process;
  const std::pair<std::uint32_t, TaskKey> task{process, TaskKey{team, creator, generation}};
  auto p = tasks_.find(task);
  if (p != tasks_.end()) {
    const TaskInfo info = p->second;
    tasks_.erase(p);
    contribute(info.wait, loc, ns(t));
    if (info.grouped) contribute(info.group, loc, ns(t));
  } else {
    early_[task] = {loc, ns(t)};
  }
  const LocalKey switches{process, {relations::LocalSub::Task, team, creator, generation}};
  local_[switches].completed = true;
  settle(switches);
}

void ClockConditions::lock_acquire(std::uint32_t loc, std::uint64_t t, std::uint8_t model,
                                   std::uint32_t lock, std::uint32_t order) {
  threads_[loc].omp.lock_acquire(ns(t), model, lock, order, emit(loc));
}

void ClockConditions::lock_release(std::uint32_t loc, std::uint64_t t, std::uint8_t model,
                                   std::uint32_t lock, std::uint32_t order) {
  threads_[loc].omp.lock_release(ns(t), model, lock, order, emit(loc));
}

void ClockConditions::finish() {
  // Calls never completed (their request left open) number nothing; those begun after them do.
  for (std::uint32_t loc = 0; loc < threads_.size(); ++loc) {
    Thread& th = threads_[loc];
    th.colls.finish(add_member(loc));
  }
  incomplete_collectives += instances_.size(); // some member never reached it (salvaged run)
  instances_.clear();
  for (const auto& [k, ch] : local_)
    evaluate(ch);
  local_.clear();
  early_.clear(); // completions of tasks never created (implicit or lost): no relation
}

} // namespace htrace::report
