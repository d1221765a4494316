// OpenMP records (fork/join, barriers, locks, tasks) -> logical messages inside one process.
#include "location_reader.h"

#include <algorithm>
#include <set>

namespace htrace::correct {
namespace {

// OpenMP: fork on the master, then team begin on every member (master included).
OTF2_CallbackCode on_fork(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, OTF2_Paradigm paradigm, uint32_t threads) {
  HT_RECORD(u, t, ThreadFork, a, paradigm, threads);
  r->pending_forks.push_back(ev);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_team_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                OTF2_AttributeList* a, OTF2_CommRef team) {
  HT_RECORD(u, t, ThreadTeamBegin, a, team);
  uint64_t instance = r->team_instances[team]++;
  Team tm{team, instance, false, UINT32_MAX, 0, false};
  if (!r->pending_forks.empty()) {
    tm.master = true;
    tm.fork_event = r->pending_forks.back();
    r->pending_forks.pop_back();
    r->link(tm.fork_event, LinkRole::Contribute, r->local_key(kFork, team, instance, 0),
            MessageKind::OpenMP);
  } else {
    r->link(ev, LinkRole::Receive, r->local_key(kFork, team, instance, 0), MessageKind::OpenMP);
  }
  r->teams.push_back(tm);
  r->current = implicit_task(team, r->loc_.location, instance);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_team_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                              OTF2_AttributeList* a, OTF2_CommRef team) {
  HT_RECORD(u, t, ThreadTeamEnd, a, team);
  for (size_t i = r->teams.size(); i-- > 0;) {
    Team& tm = r->teams[i];
    if (tm.comm != team) continue;
    if (tm.ended) continue;
    // The master's own team end precedes its join locally; only other members contribute.
    if (tm.master) {
      tm.ended = true;
    } else {
      r->link(ev, LinkRole::Contribute, r->local_key(kJoin, team, tm.instance, 0),
              MessageKind::OpenMP);
      r->teams.erase(r->teams.begin() + static_cast<long>(i));
    }
    break;
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_join(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, OTF2_Paradigm paradigm) {
  HT_RECORD(u, t, ThreadJoin, a, paradigm);
  // The master's most recently ended team is the one joined.
  for (size_t i = r->teams.size(); i-- > 0;) {
    if (!r->teams[i].ended) continue;
    r->link(ev, LinkRole::Receive, r->local_key(kJoin, r->teams[i].comm, r->teams[i].instance, 0),
            MessageKind::OpenMP);
    r->teams.erase(r->teams.begin() + static_cast<long>(i));
    break;
  }
  return OTF2_CALLBACK_SUCCESS;
}
Team* active_team(LocationReader* r) {
  for (size_t i = r->teams.size(); i-- > 0;)
    if (!r->teams[i].ended) return &r->teams[i];
  return nullptr;
}
// Regions: OpenMP barriers and taskwaits; the last region entered also tells the MPI side whether
// a collective record belongs to a neighborhood collective.
OTF2_CallbackCode on_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, OTF2_RegionRef region) {
  HT_RECORD(u, t, Enter, a, region);
  r->last_entered = region;
  r->region_depth++;
  const RegionInfo::Sync sync = r->defs_.region(region).sync;
  if (sync == RegionInfo::Sync::Taskgroup)
    r->open_groups.push_back({{r->current, r->groups_entered[r->current]++}, r->region_depth});
  if (sync == RegionInfo::Sync::Taskwait) r->open_waits.push_back({r->current, r->region_depth});
  if (r->barrier_depth > 0) {
    r->barrier_depth++;
  } else if (sync == RegionInfo::Sync::Barrier) {
    if (Team* tm = active_team(r)) {
      r->barrier_depth = 1;
      r->barrier_enter = ev;
      r->link(ev, LinkRole::Contribute, r->barrier_key(*tm), MessageKind::OpenMP);
    }
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, OTF2_RegionRef region) {
  HT_RECORD(u, t, Leave, a, region);
  if (!r->open_groups.empty() && r->open_groups.back().second == r->region_depth) {
    const TaskGroup& g = r->open_groups.back().first;
    r->link(ev, LinkRole::Receive, task_wait_key(r->process(), kTaskgroup, g.task, g.index),
            MessageKind::OpenMP);
    r->open_groups.pop_back();
  }
  if (!r->open_waits.empty() && r->open_waits.back().second == r->region_depth) {
    const TaskKey& p = r->open_waits.back().first;
    uint64_t& w = r->taskwaits[p];
    r->link(ev, LinkRole::Receive, task_wait_key(r->process(), kTaskwait, p, w),
            MessageKind::OpenMP);
    ++w;
    r->open_waits.pop_back();
  }
  r->region_depth--;
  if (r->barrier_depth > 0 && --r->barrier_depth == 0) {
    if (Team* tm = active_team(r)) {
      r->link(ev, LinkRole::Receive, r->barrier_key(*tm), MessageKind::OpenMP);
      tm->barriers++;
    }
  }
  return OTF2_CALLBACK_SUCCESS;
}
// Lock acquisition n+1 happens after release n of the same lock.
OTF2_CallbackCode on_acquire(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                             OTF2_AttributeList* a, OTF2_Paradigm model, uint32_t lock,
                             uint32_t order) {
  HT_RECORD(u, t, ThreadAcquireLock, a, model, lock, order);
  r->link(ev, LinkRole::Receive, r->local_key(kLock, model, lock, order), MessageKind::OpenMP);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_release(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                             OTF2_AttributeList* a, OTF2_Paradigm model, uint32_t lock,
                             uint32_t order) {
  HT_RECORD(u, t, ThreadReleaseLock, a, model, lock, order);
  r->link(ev, LinkRole::Contribute,
          r->local_key(kLock, model, lock, static_cast<uint64_t>(order) + 1), MessageKind::OpenMP);
  return OTF2_CALLBACK_SUCCESS;
}
// A task runs only after it was created: create -> every switch to it.
OTF2_CallbackCode on_task_create(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList* a, OTF2_CommRef team, uint32_t creator,
                                 uint32_t generation) {
  HT_RECORD(u, t, ThreadTaskCreate, a, team, creator, generation);
  r->link(ev, LinkRole::Contribute, r->local_key(kTask, team, creator, generation),
          MessageKind::OpenMP);
  const TaskKey child{team, creator, generation};
  r->tasks->parent[child] = {r->current, r->taskwaits[r->current]};
  if (!r->open_groups.empty() && r->open_groups.back().first.task == r->current)
    r->tasks->created_in[child] = r->open_groups.back().first;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_task_switch(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList* a, OTF2_CommRef team, uint32_t creator,
                                 uint32_t generation) {
  HT_RECORD(u, t, ThreadTaskSwitch, a, team, creator, generation);
  // Generation 0 is the switch back to the implicit task.
  if (generation == 0) {
    if (Team* tm = active_team(r))
      r->current = implicit_task(tm->comm, r->loc_.location, tm->instance);
    return OTF2_CALLBACK_SUCCESS;
  }
  r->link(ev, LinkRole::Receive, r->local_key(kTask, team, creator, generation),
          MessageKind::OpenMP);
  r->current = TaskKey{team, creator, generation};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_task_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                   OTF2_AttributeList* a, OTF2_CommRef team, uint32_t creator,
                                   uint32_t generation) {
  HT_RECORD(u, t, ThreadTaskComplete, a, team, creator, generation);
  // Tasks still running at a barrier complete inside it, and no thread leaves the barrier
  // before they have: a completion there is one more contribution to the barrier.
  if (r->barrier_depth > 0)
    if (Team* tm = active_team(r))
      r->link(ev, LinkRole::Contribute, r->barrier_key(*tm), MessageKind::OpenMP);
  r->tasks->completions.push_back({r->model_index, ev, TaskKey{team, creator, generation}});
  return OTF2_CALLBACK_SUCCESS;
}

// The taskgroup a task belongs to: the one it was created in, else its creator's, up the chain
// of creators. Results are remembered for every task on the way (chains of recursive tasks can be
// long); a malformed trace whose creators form a cycle yields none.
const TaskGroup* group_of(TaskTracker& tasks, TaskKey task) {
  std::vector<TaskKey> path;
  std::set<TaskKey> seen;
  const TaskGroup* found = nullptr;
  for (;;) {
    auto in = tasks.created_in.find(task);
    if (in != tasks.created_in.end()) {
      found = &in->second;
      break;
    }
    auto memo = tasks.group_of.find(task);
    if (memo != tasks.group_of.end()) {
      found = memo->second;
      break;
    }
    if (!seen.insert(task).second) break;
    path.push_back(task);
    auto up = tasks.parent.find(task);
    if (up == tasks.parent.end()) break;
    task = up->second.first;
  }
  for (const TaskKey& t : path)
    tasks.group_of[t] = found;
  return found;
}

} // namespace

void join_tasks(TaskTracker& tasks, uint32_t process, LocalModel& model) {
  std::vector<size_t> touched;
  for (const TaskTracker::Completion& c : tasks.completions) {
    auto contribute = [&](const ChannelKey& key) {
      add_link(model.locations[c.location], c.event, LinkRole::Contribute,
               model.channels.get(key, MessageKind::OpenMP), model);
      touched.push_back(c.location);
    };
    if (const TaskGroup* g = group_of(tasks, c.task))
      contribute(task_wait_key(process, kTaskgroup, g->task, g->index));
    auto it = tasks.parent.find(c.task);
    if (it != tasks.parent.end())
      contribute(task_wait_key(process, kTaskwait, it->second.first, it->second.second));
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (size_t l : touched)
    sort_links(model.locations[l]);
}

void register_openmp_relations(format::EventDecodeCallbacks& cbs) {
  cbs.ThreadFork = on_fork;
  cbs.ThreadTeamBegin = on_team_begin;
  cbs.ThreadTeamEnd = on_team_end;
  cbs.ThreadJoin = on_join;
  cbs.Enter = on_enter;
  cbs.Leave = on_leave;
  cbs.ThreadAcquireLock = on_acquire;
  cbs.ThreadReleaseLock = on_release;
  cbs.ThreadTaskCreate = on_task_create;
  cbs.ThreadTaskSwitch = on_task_switch;
  cbs.ThreadTaskComplete = on_task_complete;
}

} // namespace htrace::correct
