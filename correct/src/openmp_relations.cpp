// OpenMP records (fork/join, barriers, locks, tasks) -> logical messages inside one process.
#include "location_reader.h"

#include <algorithm>
#include <set>

namespace htrace::correct {
using relations::task_wait_key;
namespace {

// The rules are relations::OpenMpThread's; the LocationReader links what it emits.
OTF2_CallbackCode on_fork(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, OTF2_Paradigm paradigm, uint32_t threads) {
  HT_RECORD(u, t, ThreadFork, a, paradigm, threads);
  r->omp.fork(ev, *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_team_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                OTF2_AttributeList* a, OTF2_CommRef team) {
  HT_RECORD(u, t, ThreadTeamBegin, a, team);
  r->omp.team_begin(ev, team, *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_team_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                              OTF2_AttributeList* a, OTF2_CommRef team) {
  HT_RECORD(u, t, ThreadTeamEnd, a, team);
  r->omp.team_end(ev, team, *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_join(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, OTF2_Paradigm paradigm) {
  HT_RECORD(u, t, ThreadJoin, a, paradigm);
  r->omp.join(ev, *r);
  return OTF2_CALLBACK_SUCCESS;
}
// Regions: OpenMP barriers, taskwaits and taskgroups; the last region entered also tells the MPI
// side whether a collective record belongs to a neighborhood collective.
OTF2_CallbackCode on_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, OTF2_RegionRef region) {
  HT_RECORD(u, t, Enter, a, region);
  r->last_entered = region;
  r->omp.enter(ev, r->defs_.region(region), *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, OTF2_RegionRef region) {
  HT_RECORD(u, t, Leave, a, region);
  r->omp.leave(ev, *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_acquire(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                             OTF2_AttributeList* a, OTF2_Paradigm model, uint32_t lock,
                             uint32_t order) {
  HT_RECORD(u, t, ThreadAcquireLock, a, model, lock, order);
  r->omp.lock_acquire(ev, model, lock, order, *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_release(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                             OTF2_AttributeList* a, OTF2_Paradigm model, uint32_t lock,
                             uint32_t order) {
  HT_RECORD(u, t, ThreadReleaseLock, a, model, lock, order);
  r->omp.lock_release(ev, model, lock, order, *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_task_create(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList* a, OTF2_CommRef team, uint32_t creator,
                                 uint32_t generation) {
  HT_RECORD(u, t, ThreadTaskCreate, a, team, creator, generation);
  const relations::TaskCreation c = r->omp.task_create(ev, team, creator, generation, *r);
  r->tasks->parent[c.child] = {c.parent, c.parent_waits};
  if (c.in_group) r->tasks->created_in[c.child] = c.group;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_task_switch(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList* a, OTF2_CommRef team, uint32_t creator,
                                 uint32_t generation) {
  HT_RECORD(u, t, ThreadTaskSwitch, a, team, creator, generation);
  r->omp.task_switch(ev, team, creator, generation, *r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_task_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                   OTF2_AttributeList* a, OTF2_CommRef team, uint32_t creator,
                                   uint32_t generation) {
  HT_RECORD(u, t, ThreadTaskComplete, a, team, creator, generation);
  r->omp.task_complete(ev, *r);
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
      contribute(local_channel_key(process, g->key()));
    auto it = tasks.parent.find(c.task);
    if (it != tasks.parent.end())
      contribute(local_channel_key(process, task_wait_key(relations::LocalSub::Taskwait,
                                                          it->second.first, it->second.second)));
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
