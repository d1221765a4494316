// Shared by the callbacks that turn records into logical-message links while the events are read
// (mpi_relations.cpp, openmp_relations.cpp) and by the reader that drives them (model_reader.cpp).
// Internal to the engine. Matching rules (see clc.md): p2p by posting order per (source,
// destination, comm, tag); collectives by their order of issue per communicator; OpenMP relations
// by team instance, barrier count, lock acquisition order and task id. All sequence numbers come
// from records only, never from timestamps, so every correction process derives the same keys.
#ifndef HTRACE_CORRECT_LOCATION_READER_H
#define HTRACE_CORRECT_LOCATION_READER_H

#include "correct/model_reader.h"
#include "correct/record_store.h"
#include "event_store.inc"
#include "format/event_decoder.h"
#include "relations/collective_bounds.h"
#include "relations/collective_calls.h"
#include "relations/openmp_thread.h"
#include "relations/p2p_messages.h"

#include <map>
#include <tuple>
#include <vector>

namespace htrace::correct {

// The channel of an OpenMP relation inside one process.
inline ChannelKey local_channel_key(uint32_t process, const relations::LocalKey& k) {
  return {ChannelType::Local, (static_cast<uint64_t>(process) << 8) | static_cast<uint64_t>(k.sub),
          k.a, k.b, k.c};
}

using relations::TaskGroup;
using relations::TaskKey;
// Children's completion -> their parent's next taskwait exit. Creates, completions and taskwaits
// of one process may sit on different locations, so they are joined after the process is read.
struct TaskTracker {
  std::map<TaskKey, std::pair<TaskKey, uint64_t>> parent; // child -> (parent, taskwait index)
  // Task -> the innermost taskgroup open in its creator when it was created. A task created
  // outside any belongs to its creator's group (descendants count too): see join_tasks.
  std::map<TaskKey, TaskGroup> created_in;
  std::map<TaskKey, const TaskGroup*> group_of; // resolved along the creator chain (memo)
  struct Completion {
    size_t location;
    uint32_t event;
    TaskKey task;
  };
  std::vector<Completion> completions;
};

inline uint64_t comm_tag(OTF2_CommRef comm, uint32_t tag) {
  return (static_cast<uint64_t>(comm) << 32) | tag;
}

// A message end handed out by relations::PostedMessages, in posting order.
struct RawMessageEnd {
  uint32_t event; // the send, or the receive's completion
  uint32_t peer;  // the receiving (send) or sending (receive) process; UINT32_MAX: unknown
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
// The MPI records of one location until they are resolved into links. One set serves every
// location read: memory touched for one is reused by the next instead of being faulted in again.
struct RawMpiRecords {
  std::vector<RawMessageEnd> sends, recvs;
  std::vector<RawColl> colls;
};

class LocationReader final : public EventStoreSink {
public:
  LocationReader(const Definitions& d, LocalModel& m, LocationModel& loc, bool keep_records,
                 RawMpiRecords& raw)
      : sends(raw.sends), recvs(raw.recvs), colls(raw.colls), omp(loc.location), defs_(d),
        model_(m), loc_(loc) {
    times = &loc.input;
    store = keep_records ? &loc.records : nullptr;
    sends.clear(), recvs.clear(), colls.clear();
  }

  uint32_t index() const { return static_cast<uint32_t>(loc_.input.size()); }

  uint32_t process() const { return loc_.process; }
  // Called for every p2p record, nearly always with the communicator of the previous one.
  uint32_t rank_process(uint64_t comm, uint32_t rank) {
    if (comm != last_comm_ || !last_comm_info_) {
      auto it = defs_.comms.find(static_cast<OTF2_CommRef>(comm));
      if (it == defs_.comms.end()) return UINT32_MAX;
      last_comm_ = comm, last_comm_info_ = &it->second;
    }
    return rank < last_comm_info_->rank_process.size() ? last_comm_info_->rank_process[rank]
                                                       : UINT32_MAX;
  }
  void link(uint32_t event, LinkRole role, const ChannelKey& key, MessageKind kind) {
    add_link(loc_, event, role, model_.channels.get(key, kind), model_);
  }
  // Links an OpenMP relation of this location's thread (relations::OpenMpThread's emit).
  void operator()(relations::Event event, relations::Role role, const relations::LocalKey& key) {
    link(static_cast<uint32_t>(event),
         role == relations::Role::Contribute ? LinkRole::Contribute : LinkRole::Receive,
         local_channel_key(loc_.process, key), MessageKind::OpenMP);
  }
  bool in_neighborhood_collective() const { return defs_.region(last_entered).neighborhood; }
  // The channel of a message end of this location; `peer` is a rank of `comm`.
  relations::P2pChannel sent_on(OTF2_CommRef comm, uint32_t peer, uint32_t tag) {
    return {loc_.process, rank_process(comm, peer), comm, tag};
  }
  relations::P2pChannel received_on(OTF2_CommRef comm, uint32_t peer, uint32_t tag) {
    return {rank_process(comm, peer), loc_.process, comm, tag};
  }
  // Keeps the message ends relations::PostedMessages hands out, for ProcessMatcher.
  auto keep_p2p() {
    return [this](const relations::MessageEnd<uint32_t>& e) {
      const uint64_t key = comm_tag(e.channel.comm, e.channel.tag);
      if (e.side == relations::P2pSide::Send)
        sends.push_back({e.what, e.channel.dst, key});
      else
        recvs.push_back({e.what, e.channel.src, key});
    };
  }
  // Keeps the collective calls relations::CollectiveCalls hands out, for ProcessMatcher.
  auto keep_coll() {
    return [this](const relations::CollectiveCall& c) {
      colls.push_back({static_cast<uint32_t>(c.begin), static_cast<uint32_t>(c.end), c.op, c.comm,
                       c.root, c.received});
    };
  }

  // MPI state, resolved after the location is read.
  std::vector<RawMessageEnd>& sends;
  std::vector<RawMessageEnd>& recvs;
  std::vector<RawColl>& colls;
  relations::PostedMessages<uint32_t> p2p; // payload: the event index
  relations::CollectiveCalls coll_calls;
  // Collective records inside a neighborhood collective carry no relation (see RegionInfo).
  OTF2_RegionRef last_entered = OTF2_UNDEFINED_REGION;
  // OpenMP state.
  relations::OpenMpThread omp;
  uint64_t unknown = 0; // records of types unknown to the OTF2 library
  // Task completions are joined per process (join_tasks).
  TaskTracker* tasks = nullptr;
  size_t model_index = 0;

  const Definitions& defs_;
  LocalModel& model_;
  LocationModel& loc_;

private:
  uint64_t last_comm_ = 0;
  const CommInfo* last_comm_info_ = nullptr;
};

// userData is the EventStoreSink base, so the generated store callbacks can use it too.
inline LocationReader* self(void* u) {
  return static_cast<LocationReader*>(static_cast<EventStoreSink*>(u));
}
// Every callback first keeps the record (its time and, for a location re-encoded through the
// library, the record itself).
#define HT_RECORD(u, t, Name, ...)                                                                 \
  LocationReader* r = self(u);                                                                     \
  const uint32_t ev = r->index();                                                                  \
  store_##Name(*r, t, __VA_ARGS__)

// The callbacks of the records each kind of relation is built from, for the event-file decoder
// and for OTF2's reader (registered after the generated store callbacks, which they override);
// each of them also stores its record (HT_RECORD).
void register_mpi_relations(format::EventDecodeCallbacks& callbacks);
void register_openmp_relations(format::EventDecodeCallbacks& callbacks);

// Sequence numbers per process, over its locations in id order: sends per (dst, comm, tag) and
// receives per (src, comm, tag) in posting order (relations::PostedMessages), collectives per
// comm in issue order.
struct ProcessMatcher {
  relations::CollectiveNumbering collectives;
  // Links the MPI records of a location once it has been read.
  void resolve(LocationReader& r, LocalModel& m);
};

// Restores the event order (receives first within an event) after links were appended.
void sort_links(LocationModel& loc);

// Each completed child contributes to the taskwait of its parent that followed its creation, and
// every completed task to the end of the taskgroup it belongs to.
void join_tasks(TaskTracker& tasks, uint32_t process, LocalModel& model);

} // namespace htrace::correct
#endif
