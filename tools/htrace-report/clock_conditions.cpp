#include "clock_conditions.h"

#include "format/collective_rules.h"

#include <algorithm>

namespace htrace::report {

using format::CollectivePattern;

// The implicit task of a thread in a team instance (distinct from every explicit task's key).
ClockConditions::TaskKey ClockConditions::implicit_task(std::uint32_t team, std::uint32_t loc,
                                                        std::uint64_t instance) {
  return TaskKey{team, 0x80000000u | loc, static_cast<std::uint32_t>(instance)};
}

ClockConditions::ClockConditions(const ArchiveDefs& defs)
    : defs_(defs), threads_(defs.locations.size()) {}

void ClockConditions::count(ConditionCounts& c, std::int64_t t, std::int64_t bound) {
  ++c.messages;
  if (t < bound) {
    ++c.violations;
    c.worst_ns = std::max(c.worst_ns, bound - t);
  }
}

// ---- collectives

void ClockConditions::collective_begin(std::uint32_t loc, std::uint64_t t) {
  Thread& th = threads_[loc];
  PendingColl c;
  c.begin = ns(t);
  auto r = defs_.regions.find(th.last_entered);
  c.neighborhood = r != defs_.regions.end() && r->second.cls.neighborhood;
  th.colls.push_back(c);
  th.in_blocking = true;
}

void ClockConditions::collective(std::uint32_t loc, std::uint64_t t, std::uint8_t op,
                                 std::uint32_t comm, std::uint32_t root, std::uint64_t,
                                 std::uint64_t received) {
  Thread& th = threads_[loc];
  if (!th.in_blocking) th.colls.emplace_back(); // an end without its begin: begins there
  th.in_blocking = false;
  end_collective(loc, th.colls.back(), ns(t), op, comm, root, received);
}

void ClockConditions::nbc_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  Thread& th = threads_[loc];
  PendingColl c;
  c.begin = ns(t);
  c.request = request;
  c.nonblocking = true;
  auto r = defs_.regions.find(th.last_entered);
  c.neighborhood = r != defs_.regions.end() && r->second.cls.neighborhood;
  // (an open blocking call stays last: its end resolves colls.back())
  th.colls.insert(th.in_blocking ? th.colls.end() - 1 : th.colls.end(), c);
}

void ClockConditions::nbc_complete(std::uint32_t loc, std::uint64_t t, std::uint8_t op,
                                   std::uint32_t comm, std::uint32_t root, std::uint64_t,
                                   std::uint64_t received, std::uint64_t request) {
  Thread& th = threads_[loc];
  for (PendingColl& c : th.colls)
    if (c.nonblocking && !c.resolved && c.request == request)
      return end_collective(loc, c, ns(t), op, comm, root, received);
  PendingColl c; // a completion without its request: begins there
  c.nonblocking = true;
  auto at = th.colls.insert(th.in_blocking ? th.colls.end() - 1 : th.colls.end(), c);
  end_collective(loc, *at, ns(t), op, comm, root, received);
}

void ClockConditions::end_collective(std::uint32_t loc, PendingColl& c, std::int64_t t,
                                     std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                                     std::uint64_t received) {
  c.end = t;
  if (c.begin == kNone) c.begin = t;
  c.op = op;
  c.comm = comm;
  c.root = root;
  c.waits = format::collective_end_waits(op, received);
  c.resolved = true;
  release_resolved(loc);
}

// Instances are numbered per communicator in each process's begin order (htrace-correct's
// matching), so a call is numbered once every call begun before it on its location is complete.
void ClockConditions::release_resolved(std::uint32_t loc) {
  Thread& th = threads_[loc];
  while (!th.colls.empty() && th.colls.front().resolved) {
    if (!th.colls.front().neighborhood) add_member(defs_.locations[loc].process, th.colls.front());
    th.colls.pop_front();
  }
}

void ClockConditions::add_member(std::uint32_t process, const PendingColl& c) {
  auto comm = defs_.comms.find(c.comm);
  if (comm == defs_.comms.end() || comm->second.members.size() < 2) return;
  const auto& members = comm->second.members;
  std::size_t rank = 0;
  while (rank < members.size() && defs_.locations[members[rank]].process != process)
    ++rank;
  if (rank == members.size()) return;
  const std::uint64_t seq = coll_seq_[{process, c.comm}]++;
  auto it = instances_.try_emplace({c.comm, seq}).first;
  CollInstance& inst = it->second;
  if (inst.members.empty()) {
    inst.members.resize(members.size());
    inst.op = c.op;
    inst.root = c.root;
  }
  Member& m = inst.members[rank];
  if (m.seen) return;
  m = {c.begin, c.end, c.waits, true};
  if (++inst.ended < inst.members.size()) return;
  evaluate(c.comm, inst);
  instances_.erase(it);
}

void ClockConditions::evaluate(std::uint32_t comm, const CollInstance& inst) {
  const auto& locations = defs_.comms.at(comm).members;
  auto process = [&](std::size_t rank) { return defs_.locations[locations[rank]].process; };
  // Latest begin among the ranks `take` selects.
  auto latest = [&](auto take) {
    std::int64_t v = kNone;
    for (std::size_t r = 0; r < inst.members.size(); ++r)
      if (take(r)) v = std::max(v, inst.members[r].begin);
    return v;
  };
  const format::CollectivePattern p = format::collective_pattern(inst.op);
  for (std::size_t r = 0; r < inst.members.size(); ++r) {
    const Member& m = inst.members[r];
    if (!m.waits) continue;
    std::int64_t bound = kNone;
    const auto others = [&](std::size_t o) { return process(o) != process(r); };
    switch (p) {
    case format::CollectivePattern::AllToAll:
      bound = latest(others);
      break;
    case format::CollectivePattern::NToOne:
      if (r == inst.root) bound = latest(others);
      break;
    case format::CollectivePattern::OneToN:
      if (r != inst.root && inst.root < inst.members.size()) bound = inst.members[inst.root].begin;
      break;
    case format::CollectivePattern::Prefix:
      bound = latest([&](std::size_t o) { return o < r; });
      break;
    }
    if (bound != kNone) count(collectives, m.end, bound);
  }
}

// ---- OpenMP

ClockConditions::Team* ClockConditions::active_team(std::uint32_t loc) {
  auto& teams = threads_[loc].teams;
  for (auto it = teams.rbegin(); it != teams.rend(); ++it)
    if (!it->ended) return &*it;
  return nullptr;
}

ClockConditions::LocalKey ClockConditions::key(Local kind, std::uint32_t loc, std::uint64_t a,
                                               std::uint64_t b, std::uint64_t c) const {
  return {kind, defs_.locations[loc].process, a, b, c};
}

ClockConditions::LocalKey ClockConditions::taskwait_key(std::uint32_t loc, const TaskKey& task,
                                                        std::uint64_t n) const {
  return key(Local::Taskwait, loc, std::get<0>(task),
             (std::uint64_t{std::get<1>(task)} << 32) | std::get<2>(task), n);
}

std::size_t ClockConditions::team_size(std::uint32_t team) const {
  auto it = defs_.comms.find(team);
  return it == defs_.comms.end() ? 0 : it->second.members.size();
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
  const Local kind = std::get<0>(k);
  const bool team = kind == Local::Fork || kind == Local::Join || kind == Local::Barrier;
  const std::size_t n = team ? team_size(static_cast<std::uint32_t>(std::get<2>(k))) : 0;
  bool complete = false;
  switch (kind) {
  case Local::Fork:
    complete = n > 0 && !ch.contributions.empty() && ch.receivers.size() + 1 == n;
    break;
  case Local::Join:
    complete = n > 0 && !ch.receivers.empty() && ch.contributions.size() + 1 == n;
    break;
  case Local::Barrier:
    complete = n > 0 && ch.receivers.size() == n;
    break;
  case Local::Lock:
    complete = !ch.receivers.empty() && !ch.contributions.empty();
    break;
  case Local::Taskwait: // every task created for it has completed
  case Local::Taskgroup:
    complete = !ch.receivers.empty() && ch.contributions.size() == ch.children;
    break;
  case Local::Task: // switches are checked as they come once the creation is known
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
  threads_[loc].forks.push_back(ns(t));
}

void ClockConditions::team_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t team) {
  Thread& th = threads_[loc];
  Team tm{team, th.team_instances[team]++, 0, !th.forks.empty()};
  th.current = implicit_task(team, loc, tm.instance);
  const LocalKey k = key(Local::Fork, loc, team, tm.instance, 0);
  if (tm.master) {
    const std::int64_t fork = th.forks.back();
    th.forks.pop_back();
    th.teams.push_back(tm);
    contribute(k, loc, fork);
  } else {
    th.teams.push_back(tm);
    receive(k, loc, ns(t));
  }
}

void ClockConditions::team_end(std::uint32_t loc, std::uint64_t t, std::uint32_t team) {
  auto& teams = threads_[loc].teams;
  for (std::size_t i = teams.size(); i-- > 0;) {
    Team& tm = teams[i];
    if (tm.comm != team || tm.ended) continue;
    if (tm.master) { // its own team end precedes its join locally
      tm.ended = true;
    } else {
      const LocalKey k = key(Local::Join, loc, team, tm.instance, 0);
      teams.erase(teams.begin() + static_cast<long>(i));
      contribute(k, loc, ns(t));
    }
    return;
  }
}

void ClockConditions::thread_join(std::uint32_t loc, std::uint64_t t) {
  auto& teams = threads_[loc].teams;
  for (std::size_t i = teams.size(); i-- > 0;) {
    if (!teams[i].ended) continue;
    const LocalKey k = key(Local::Join, loc, teams[i].comm, teams[i].instance, 0);
    teams.erase(teams.begin() + static_cast<long>(i));
    receive(k, loc, ns(t));
    return;
  }
}

void ClockConditions::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  Thread& th = threads_[loc];
  th.last_entered = region;
  ++th.region_depth;
  auto r = defs_.regions.find(region);
  const bool known = r != defs_.regions.end();
  if (known && r->second.cls.sync == format::RegionClass::Sync::Taskwait)
    th.open_waits.emplace_back(th.current, th.region_depth);
  if (known && r->second.cls.sync == format::RegionClass::Sync::Taskgroup) {
    const std::uint64_t n = th.groups_entered[th.current]++;
    th.open_groups.emplace_back(
        key(Local::Taskgroup, loc, std::get<0>(th.current),
            (std::uint64_t{std::get<1>(th.current)} << 32) | std::get<2>(th.current), n),
        th.current);
    th.open_group_depths.push_back(th.region_depth);
  }
  if (th.barrier_depth > 0) {
    ++th.barrier_depth;
    return;
  }
  if (!known || r->second.cls.sync != format::RegionClass::Sync::Barrier) return;
  if (Team* tm = active_team(loc)) {
    th.barrier_depth = 1;
    contribute(key(Local::Barrier, loc, tm->comm, tm->instance, tm->barriers), loc, ns(t));
  }
}

void ClockConditions::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) {
  Thread& th = threads_[loc];
  if (!th.open_group_depths.empty() && th.open_group_depths.back() == th.region_depth) {
    const LocalKey group = th.open_groups.back().first;
    th.open_groups.pop_back();
    th.open_group_depths.pop_back();
    receive(group, loc, ns(t));
  }
  if (!th.open_waits.empty() && th.open_waits.back().second == th.region_depth) {
    const TaskKey parent = th.open_waits.back().first;
    th.open_waits.pop_back();
    receive(taskwait_key(loc, parent, th.taskwaits[parent]++), loc, ns(t));
  }
  --th.region_depth;
  if (th.barrier_depth == 0 || --th.barrier_depth > 0) return;
  if (Team* tm = active_team(loc)) {
    const LocalKey k = key(Local::Barrier, loc, tm->comm, tm->instance, tm->barriers++);
    receive(k, loc, ns(t));
  }
}

void ClockConditions::task_create(std::uint32_t loc, std::uint64_t t, std::uint32_t team,
                                  std::uint32_t creator, std::uint32_t generation) {
  Thread& th = threads_[loc];
  const TaskKey child{team, creator, generation};
  const std::uint32_t process = defs_.locations[loc].process;
  const std::pair<std::uint32_t, TaskKey> task{process, child};
  TaskInfo info;
  info.wait = taskwait_key(loc, th.current, th.taskwaits[th.current]);
  ++local_[info.wait].children;
  if (!th.open_groups.empty() && th.open_groups.back().second == th.current) {
    info.grouped = true;
    info.group = th.open_groups.back().first;
  } else if (auto parent = tasks_.find({process, th.current});
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
  contribute(key(Local::Task, loc, team, creator, generation), loc, ns(t));
}

void ClockConditions::task_switch(std::uint32_t loc, std::uint64_t t, std::uint32_t team,
                                  std::uint32_t creator, std::uint32_t generation) {
  Thread& th = threads_[loc];
  if (generation == 0) { // back to the implicit task
    if (Team* tm = active_team(loc)) th.current = implicit_task(tm->comm, loc, tm->instance);
    return;
  }
  th.current = TaskKey{team, creator, generation};
  receive(key(Local::Task, loc, team, creator, generation), loc, ns(t));
}

void ClockConditions::task_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t team,
                                    std::uint32_t creator, std::uint32_t generation) {
  // Tasks still running at a barrier complete inside it, and no thread leaves before they have.
  if (threads_[loc].barrier_depth > 0)
    if (Team* tm = active_team(loc))
      contribute(key(Local::Barrier, loc, tm->comm, tm->instance, tm->barriers), loc, ns(t));
  const std::pair<std::uint32_t, TaskKey> task{defs_.locations[loc].process,
                                               TaskKey{team, creator, generation}};
  auto p = tasks_.find(task);
  if (p != tasks_.end()) {
    const TaskInfo info = p->second;
    tasks_.erase(p);
    contribute(info.wait, loc, ns(t));
    if (info.grouped) contribute(info.group, loc, ns(t));
  } else {
    early_[task] = {loc, ns(t)};
  }
  const LocalKey switches = key(Local::Task, loc, team, creator, generation);
  local_[switches].completed = true;
  settle(switches);
}

void ClockConditions::lock_acquire(std::uint32_t loc, std::uint64_t t, std::uint8_t model,
                                   std::uint32_t lock, std::uint32_t order) {
  receive(key(Local::Lock, loc, model, lock, order), loc, ns(t));
}

void ClockConditions::lock_release(std::uint32_t loc, std::uint64_t t, std::uint8_t model,
                                   std::uint32_t lock, std::uint32_t order) {
  contribute(key(Local::Lock, loc, model, lock, std::uint64_t{order} + 1), loc, ns(t));
}

void ClockConditions::finish() {
  // Calls never completed (their request left open) number nothing; those begun after them do.
  for (std::uint32_t loc = 0; loc < threads_.size(); ++loc) {
    Thread& th = threads_[loc];
    for (const PendingColl& c : th.colls)
      if (c.resolved && !c.neighborhood) add_member(defs_.locations[loc].process, c);
    th.colls.clear();
  }
  incomplete_collectives += instances_.size(); // some member never reached it (salvaged run)
  instances_.clear();
  for (const auto& [k, ch] : local_)
    evaluate(ch);
  local_.clear();
  early_.clear(); // completions of tasks never created (implicit or lost): no relation
}

} // namespace htrace::report
