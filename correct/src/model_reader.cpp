// Matching rules (see clc.md): p2p by posting order per (source, destination, comm, tag);
// collectives by their order of issue per communicator; OpenMP relations by team instance,
// barrier count, lock acquisition order and task id. All sequence numbers are derived from
// records only, never from timestamps, so every correction process derives the same keys.
#include "correct/model_reader.h"

#include "correct/record_store.h"
#include "event_store.inc"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

namespace htrace::correct {
namespace {

enum LocalSub : uint64_t { kFork = 1, kJoin, kBarrier, kLock, kTask, kTaskwait };

// A task: (team, creating thread, generation); implicit tasks get creator 0x80000000|location.
using TaskKey = std::tuple<uint64_t, uint32_t, uint32_t>;
// Children's completion -> their parent's next taskwait exit. Creates, completions and taskwaits
// of one process may sit on different locations, so they are joined after the process is read.
struct TaskTracker {
  std::map<TaskKey, std::pair<TaskKey, uint64_t>> parent; // child -> (parent, taskwait index)
  struct Completion {
    size_t location;
    uint32_t event;
    TaskKey task;
  };
  std::vector<Completion> completions;
};

struct RawSend {
  uint32_t event;
  uint32_t dst;
  uint64_t comm_tag;
  bool cancelled;
};
struct RawRecv {
  uint32_t post;
  uint32_t event;
  uint32_t src;
  uint64_t comm_tag;
};
struct RawColl {
  uint32_t begin;
  uint32_t end;
  uint32_t op;
  uint64_t comm;
  uint32_t root;
  uint64_t received; // bytes this member received
};
struct Team {
  uint64_t comm;
  uint64_t instance;
  bool master;
  uint32_t fork_event;
  uint64_t barriers;
  bool ended;
};

// Receivers wait for every contribution made on this correction rank (`expected`).
void add_link(LocationModel& loc, uint32_t event, LinkRole role, uint32_t channel,
              LocalModel& model) {
  loc.links.push_back({event, role, channel});
  Channel& ch = model.channels.channels[channel];
  if (role == LinkRole::Contribute)
    ch.expected++;
  else
    ch.has_receiver = true;
}

class LocationReader final : public EventStoreSink {
public:
  LocationReader(const Definitions& d, LocalModel& m, LocationModel& loc, bool keep_records)
      : defs_(d), model_(m), loc_(loc) {
    times = &loc.input;
    store = keep_records ? &loc.records : nullptr;
  }

  uint32_t index() const { return static_cast<uint32_t>(loc_.input.size()); }

  uint32_t process() const { return loc_.process; }
  uint32_t rank_process(uint64_t comm, uint32_t rank) const {
    auto it = defs_.comms.find(static_cast<OTF2_CommRef>(comm));
    if (it == defs_.comms.end() || rank >= it->second.rank_process.size()) return UINT32_MAX;
    return it->second.rank_process[rank];
  }
  void link(uint32_t event, LinkRole role, const ChannelKey& key, MessageKind kind) {
    add_link(loc_, event, role, model_.channels.get(key, kind), model_);
  }
  bool in_neighborhood_collective() const { return defs_.region(last_entered).neighborhood; }
  ChannelKey local_key(uint64_t sub, uint64_t b, uint64_t c, uint64_t d) const {
    return {ChannelType::Local, (static_cast<uint64_t>(loc_.process) << 8) | sub, b, c, d};
  }

  // MPI state, resolved after the location is read.
  std::vector<RawSend> sends;
  std::vector<RawRecv> recvs;
  std::vector<RawColl> colls;
  std::map<uint64_t, uint32_t> open_isend, open_irecv, open_coll;
  uint32_t pending_coll = UINT32_MAX;
  // Collective records inside a neighborhood collective carry no relation (see RegionInfo).
  OTF2_RegionRef last_entered = OTF2_UNDEFINED_REGION;
  bool pending_coll_neighborhood = false;
  std::set<uint64_t> neighborhood_requests;
  // OpenMP state.
  std::vector<uint32_t> pending_forks;
  std::vector<Team> teams;
  std::map<uint64_t, uint64_t> team_instances;
  uint32_t barrier_enter = UINT32_MAX;
  int barrier_depth = 0;
  uint64_t unknown = 0; // records of types unknown to the OTF2 library
  // Task state.
  TaskTracker* tasks = nullptr;
  size_t model_index = 0;
  TaskKey current{0, 0, 0};
  std::map<TaskKey, uint64_t> taskwaits; // per task on this location: taskwaits passed
  int taskwait_depth = 0;
  TaskKey taskwait_task{0, 0, 0};

  const Definitions& defs_;
  LocalModel& model_;
  LocationModel& loc_;
};

// userData is the EventStoreSink base, so the generated store callbacks can use it too.
LocationReader* self(void* u) {
  return static_cast<LocationReader*>(static_cast<EventStoreSink*>(u));
}
// Every callback first keeps the record (time and, unless --check, the record itself).
#define HT_RECORD(u, t, Name, ...)                                                                 \
  LocationReader* r = self(u);                                                                     \
  const uint32_t ev = r->index();                                                                  \
  store_##Name(*r, t, __VA_ARGS__)

uint64_t comm_tag(OTF2_CommRef comm, uint32_t tag) {
  return (static_cast<uint64_t>(comm) << 32) | tag;
}

OTF2_CallbackCode on_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                          uint64_t length) {
  HT_RECORD(u, t, MpiSend, a, receiver, comm, tag, length);
  r->sends.push_back({ev, r->rank_process(comm, receiver), comm_tag(comm, tag), false});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, uint32_t receiver, OTF2_CommRef comm,
                           uint32_t tag, uint64_t length, uint64_t request) {
  HT_RECORD(u, t, MpiIsend, a, receiver, comm, tag, length, request);
  r->open_isend[request] = static_cast<uint32_t>(r->sends.size());
  r->sends.push_back({ev, r->rank_process(comm, receiver), comm_tag(comm, tag), false});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                    OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, MpiIsendComplete, a, request);
  (void)ev;
  r->open_isend.erase(request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                          uint64_t length) {
  HT_RECORD(u, t, MpiRecv, a, sender, comm, tag, length);
  r->recvs.push_back({ev, ev, r->rank_process(comm, sender), comm_tag(comm, tag)});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                   OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, MpiIrecvRequest, a, request);
  r->open_irecv[request] = ev;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                           uint64_t length, uint64_t request) {
  HT_RECORD(u, t, MpiIrecv, a, sender, comm, tag, length, request);
  uint32_t post = ev;
  auto it = r->open_irecv.find(request);
  if (it != r->open_irecv.end()) post = it->second, r->open_irecv.erase(it);
  r->recvs.push_back({post, ev, r->rank_process(comm, sender), comm_tag(comm, tag)});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_cancelled(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                               OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, MpiRequestCancelled, a, request);
  (void)ev;
  auto it = r->open_isend.find(request);
  if (it != r->open_isend.end()) r->sends[it->second].cancelled = true, r->open_isend.erase(it);
  r->open_irecv.erase(request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                OTF2_AttributeList* a) {
  HT_RECORD(u, t, MpiCollectiveBegin, a);
  r->pending_coll = ev;
  r->pending_coll_neighborhood = r->in_neighborhood_collective();
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                              OTF2_AttributeList* a, OTF2_CollectiveOp op, OTF2_CommRef comm,
                              uint32_t root, uint64_t sent, uint64_t received) {
  HT_RECORD(u, t, MpiCollectiveEnd, a, op, comm, root, sent, received);
  uint32_t begin = r->pending_coll == UINT32_MAX ? ev : r->pending_coll;
  r->pending_coll = UINT32_MAX;
  if (!r->pending_coll_neighborhood) r->colls.push_back({begin, ev, op, comm, root, received});
  r->pending_coll_neighborhood = false;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_nbc_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, NonBlockingCollectiveRequest, a, request);
  if (r->in_neighborhood_collective()) {
    r->neighborhood_requests.insert(request);
    return OTF2_CALLBACK_SUCCESS;
  }
  r->open_coll[request] = ev;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_nbc_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                  OTF2_AttributeList* a, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                  uint32_t root, uint64_t sent, uint64_t received,
                                  uint64_t request) {
  HT_RECORD(u, t, NonBlockingCollectiveComplete, a, op, comm, root, sent, received, request);
  if (r->neighborhood_requests.erase(request)) return OTF2_CALLBACK_SUCCESS;
  uint32_t begin = ev;
  auto it = r->open_coll.find(request);
  if (it != r->open_coll.end()) begin = it->second, r->open_coll.erase(it);
  r->colls.push_back({begin, ev, op, comm, root, received});
  return OTF2_CALLBACK_SUCCESS;
}

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
  r->current = TaskKey{team, 0x80000000u | r->loc_.location, static_cast<uint32_t>(instance)};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_team_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                              OTF2_AttributeList* a, OTF2_CommRef team) {
  HT_RECORD(u, t, ThreadTeamEnd, a, team);
  for (size_t i = r->teams.size(); i-- > 0;) {
    Team& tm = r->teams[i];
    if (tm.comm != team) continue;
    // The master's own team end precedes its join locally; only other members contribute.
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
bool is_barrier(const Definitions& d, OTF2_RegionRef region) {
  const RegionInfo& r = d.region(region);
  return (r.role == OTF2_REGION_ROLE_BARRIER || r.role == OTF2_REGION_ROLE_IMPLICIT_BARRIER) &&
         r.paradigm != OTF2_PARADIGM_MPI;
}
bool is_taskwait(const Definitions& d, OTF2_RegionRef region) {
  const RegionInfo& r = d.region(region);
  return r.role == OTF2_REGION_ROLE_TASK_WAIT && r.paradigm != OTF2_PARADIGM_MPI;
}
Team* active_team(LocationReader* r) {
  for (size_t i = r->teams.size(); i-- > 0;)
    if (!r->teams[i].ended) return &r->teams[i];
  return nullptr;
}
OTF2_CallbackCode on_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, OTF2_RegionRef region) {
  HT_RECORD(u, t, Enter, a, region);
  r->last_entered = region;
  if (r->taskwait_depth > 0) {
    r->taskwait_depth++;
  } else if (r->barrier_depth == 0 && is_taskwait(r->defs_, region)) {
    r->taskwait_depth = 1;
    r->taskwait_task = r->current;
  }
  if (r->barrier_depth > 0) {
    r->barrier_depth++;
  } else if (is_barrier(r->defs_, region)) {
    if (Team* tm = active_team(r)) {
      r->barrier_depth = 1;
      r->barrier_enter = ev;
      r->link(ev, LinkRole::Contribute,
              r->local_key(kBarrier, tm->comm, tm->instance, tm->barriers), MessageKind::OpenMP);
    }
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, OTF2_RegionRef region) {
  HT_RECORD(u, t, Leave, a, region);
  if (r->taskwait_depth > 0 && --r->taskwait_depth == 0) {
    const TaskKey& p = r->taskwait_task;
    uint64_t& w = r->taskwaits[p];
    r->link(ev, LinkRole::Receive,
            r->local_key(kTaskwait, std::get<0>(p),
                         (uint64_t(std::get<1>(p)) << 32) | std::get<2>(p), w),
            MessageKind::OpenMP);
    ++w;
  }
  if (r->barrier_depth > 0 && --r->barrier_depth == 0) {
    if (Team* tm = active_team(r)) {
      r->link(ev, LinkRole::Receive, r->local_key(kBarrier, tm->comm, tm->instance, tm->barriers),
              MessageKind::OpenMP);
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
  r->tasks->parent[TaskKey{team, creator, generation}] = {r->current, r->taskwaits[r->current]};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_task_switch(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList* a, OTF2_CommRef team, uint32_t creator,
                                 uint32_t generation) {
  HT_RECORD(u, t, ThreadTaskSwitch, a, team, creator, generation);
  // Generation 0 is the switch back to the implicit task.
  if (generation == 0) {
    if (Team* tm = active_team(r))
      r->current =
          TaskKey{tm->comm, 0x80000000u | r->loc_.location, static_cast<uint32_t>(tm->instance)};
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
      r->link(ev, LinkRole::Contribute,
              r->local_key(kBarrier, tm->comm, tm->instance, tm->barriers), MessageKind::OpenMP);
  r->tasks->completions.push_back({r->model_index, ev, TaskKey{team, creator, generation}});
  return OTF2_CALLBACK_SUCCESS;
}

// A record of a type newer than this OTF2 library: it cannot be carried, only counted.
OTF2_CallbackCode on_unknown(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u,
                             OTF2_AttributeList*) {
  self(u)->unknown++;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_EvtReaderCallbacks* make_callbacks() {
  OTF2_EvtReaderCallbacks* cbs = OTF2_EvtReaderCallbacks_New();
  register_store_events(cbs);
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cbs, on_unknown);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, on_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, on_isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cbs, on_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cbs, on_recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, on_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cbs, on_irecv);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cbs, on_cancelled);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, on_coll_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, on_coll_end);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cbs, on_nbc_request);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cbs, on_nbc_complete);
  OTF2_EvtReaderCallbacks_SetThreadForkCallback(cbs, on_fork);
  OTF2_EvtReaderCallbacks_SetThreadTeamBeginCallback(cbs, on_team_begin);
  OTF2_EvtReaderCallbacks_SetThreadTeamEndCallback(cbs, on_team_end);
  OTF2_EvtReaderCallbacks_SetThreadJoinCallback(cbs, on_join);
  OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, on_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, on_leave);
  OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(cbs, on_acquire);
  OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(cbs, on_release);
  OTF2_EvtReaderCallbacks_SetThreadTaskCreateCallback(cbs, on_task_create);
  OTF2_EvtReaderCallbacks_SetThreadTaskSwitchCallback(cbs, on_task_switch);
  OTF2_EvtReaderCallbacks_SetThreadTaskCompleteCallback(cbs, on_task_complete);
  return cbs;
}

// Whether a member's end waits for other members: only if data reaches it (MPI returns at once
// from a collective that moves no data to the caller, e.g. a bcast of count 0), or the operation
// synchronizes by itself. MPI_Comm_free need not synchronize (Open MPI's is local).
bool end_waits(const RawColl& c) {
  if (c.op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE) return false;
  return c.op == OTF2_COLLECTIVE_OP_BARRIER || c.op == OTF2_COLLECTIVE_OP_CREATE_HANDLE ||
         c.received > 0;
}

// Sequence numbers per process, over its locations in id order: sends per (dst, comm, tag),
// receives per (src, comm, tag) in posting order, collectives per comm in issue order.
struct ProcessMatcher {
  std::map<uint64_t, uint64_t> coll_seq;

  void resolve(LocationReader& r, LocalModel& m) {
    uint32_t me = r.process();
    for (const RawSend& s : r.sends) {
      if (s.cancelled || s.dst == UINT32_MAX || s.dst == me) continue;
      P2PStream& st = m.channels.stream(me, s.dst, s.comm_tag);
      add_link(r.loc_, s.event, LinkRole::Contribute, m.channels.p2p(st, st.sends++), m);
    }
    auto posted_before = [](const RawRecv& a, const RawRecv& b) { return a.post < b.post; };
    if (!std::is_sorted(r.recvs.begin(), r.recvs.end(), posted_before))
      std::sort(r.recvs.begin(), r.recvs.end(), posted_before);
    for (const RawRecv& x : r.recvs) {
      if (x.src == UINT32_MAX || x.src == me) continue;
      P2PStream& st = m.channels.stream(x.src, me, x.comm_tag);
      add_link(r.loc_, x.event, LinkRole::Receive, m.channels.p2p(st, st.receives++), m);
    }
    auto begun_before = [](const RawColl& a, const RawColl& b) { return a.begin < b.begin; };
    if (!std::is_sorted(r.colls.begin(), r.colls.end(), begun_before))
      std::sort(r.colls.begin(), r.colls.end(), begun_before);
    for (const RawColl& c : r.colls) {
      auto it = r.defs_.comms.find(static_cast<OTF2_CommRef>(c.comm));
      if (it == r.defs_.comms.end()) continue;
      auto rk = it->second.process_rank.find(me);
      if (rk == it->second.process_rank.end() || it->second.rank_process.size() < 2) continue;
      uint64_t seq = coll_seq[c.comm]++;
      uint32_t id =
          m.channels.get({ChannelType::Collective, c.comm, seq, 0, 0}, MessageKind::Collective);
      Channel& ch = m.channels.channels[id];
      if (ch.collective == UINT32_MAX) {
        ch.collective = static_cast<uint32_t>(m.collectives.size());
        CollectiveInstance& inst = m.collectives.emplace_back();
        inst.pattern = collective_pattern(c.op);
        inst.root = c.root;
        inst.members = static_cast<uint32_t>(it->second.rank_process.size());
      }
      add_link(r.loc_, c.begin, LinkRole::Contribute, id, m);
      if (end_waits(c)) add_link(r.loc_, c.end, LinkRole::Receive, id, m);
    }
    sort_links(r.loc_);
  }
  // Links arrive as a few runs already in event order (sends, receives, collectives, each in
  // record order), so merging the runs beats sorting them.
  static void sort_links(LocationModel& loc) {
    auto before = [](const Link& a, const Link& b) {
      return a.event != b.event ? a.event < b.event : a.role < b.role;
    };
    std::vector<Link>& links = loc.links;
    std::vector<size_t> runs{0};
    for (size_t i = 1; i < links.size(); ++i)
      if (before(links[i], links[i - 1])) runs.push_back(i);
    runs.push_back(links.size());
    if (runs.size() > 8) { // many runs (e.g. completions out of posting order): plain sort
      std::stable_sort(links.begin(), links.end(), before);
      return;
    }
    while (runs.size() > 2) {
      std::vector<size_t> merged{0};
      for (size_t r = 1; r + 1 < runs.size(); r += 2) {
        std::inplace_merge(links.begin() + long(runs[r - 1]), links.begin() + long(runs[r]),
                           links.begin() + long(runs[r + 1]), before);
        merged.push_back(runs[r + 1]);
      }
      if (merged.back() != runs.back()) merged.push_back(runs.back());
      runs.swap(merged);
    }
  }
};

// Each completed child contributes to the taskwait of its parent that followed its creation.
void join_tasks(TaskTracker& tasks, uint32_t process, LocalModel& model) {
  std::vector<size_t> touched;
  for (const TaskTracker::Completion& c : tasks.completions) {
    auto it = tasks.parent.find(c.task);
    if (it == tasks.parent.end()) continue;
    const TaskKey& p = it->second.first;
    ChannelKey key{ChannelType::Local, (static_cast<uint64_t>(process) << 8) | kTaskwait,
                   std::get<0>(p), (uint64_t(std::get<1>(p)) << 32) | std::get<2>(p),
                   it->second.second};
    add_link(model.locations[c.location], c.event, LinkRole::Contribute,
             model.channels.get(key, MessageKind::OpenMP), model);
    touched.push_back(c.location);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (size_t l : touched)
    ProcessMatcher::sort_links(model.locations[l]);
}

} // namespace

void read_models(OTF2_Reader* reader, const Definitions& defs,
                 const std::vector<uint32_t>& processes, bool keep_records, LocalModel& model) {
  OTF2_EvtReaderCallbacks* cbs = make_callbacks();
  for (uint32_t p : processes) {
    ProcessMatcher matcher;
    TaskTracker tasks;
    for (uint32_t li : defs.processes[p].locations) {
      const LocationInfo& info = defs.locations[li];
      model.locations.emplace_back();
      LocationModel& loc = model.locations.back();
      loc.location = li;
      loc.process = p;
      loc.input.reserve(info.declared_events);
      LocationReader r(defs, model, loc, keep_records);
      r.tasks = &tasks;
      r.model_index = model.locations.size() - 1;
      const std::string where = "location " + std::to_string(info.id) + " (" + info.name + ")";
      if (info.declared_events > 0) {
        OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, info.id);
        if (!er) throw std::runtime_error(where + ": cannot open its event file");
        OTF2_Reader_RegisterEvtCallbacks(reader, er, cbs, static_cast<EventStoreSink*>(&r));
        uint64_t n = 0;
        OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalEvents(reader, er, &n);
        OTF2_Reader_CloseEvtReader(reader, er);
        if (rc != OTF2_SUCCESS)
          throw std::runtime_error(where + ": corrupt event file (" +
                                   OTF2_Error_GetDescription(rc) + ")");
        model.unknown_events += r.unknown;
        if (loc.input.size() + r.unknown != info.declared_events)
          throw std::runtime_error(where + ": " + std::to_string(loc.input.size()) +
                                   " events read, the definitions declare " +
                                   std::to_string(info.declared_events) +
                                   " (truncated event file?)");
      }
      matcher.resolve(r, model);
      model.events += loc.input.size();
    }
    join_tasks(tasks, p, model);
  }
  OTF2_EvtReaderCallbacks_Delete(cbs);
}

} // namespace htrace::correct
