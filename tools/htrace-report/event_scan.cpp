#include "event_scan.h"

#include "format/anchor_file.h"
#include "format/event_file.h"
#include "format/event_merge.h"
#include "format/local_definitions.h"
#include "format/otf2_library.h"

#include <algorithm>
#include <numeric>
#include <otf2/otf2.h>
#include <stdexcept>
#include <sys/resource.h>

namespace htrace::report {
namespace {

struct ScanState {
  const ArchiveDefs* defs;
  const std::vector<EventSink*>* sinks;
  const Progress* progress;
  const std::vector<std::uint32_t>* by_input = nullptr; // the merge's inputs -> location index
  bool time_order = true;
  /// Events between the sinks' read_before() calls: what they keep until then grows with it.
  std::uint64_t step = 0;
  std::uint64_t events = 0, next_step = 0;

  /// Every event counts towards progress; in time order, every event before `t` is delivered.
  void count(std::uint64_t t) {
    ++events;
    if ((events & 0xffff) == 0 && *progress) (*progress)(events);
    if (time_order && events >= next_step) {
      read_before(t);
      next_step = events + step;
    }
  }
  void read_before(std::uint64_t t) const {
    for (EventSink* k : *sinks)
      k->read_before(t);
  }
  /// Location index of an OTF2 location id, UINT32_MAX for one the definitions do not list.
  std::uint32_t by_id(OTF2_LocationRef id) const {
    auto it = defs->location_index.find(id);
    return it == defs->location_index.end() ? UINT32_MAX : it->second;
  }
};

ScanState& of(void* u) {
  return *static_cast<ScanState*>(u);
}

// What one event of each type hands to a sink (the record's fields as OTF2's readers pass them).
void enter(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_RegionRef region) {
  k.enter(l, t, region);
}
void leave(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_RegionRef region) {
  k.leave(l, t, region);
}
void send(EventSink& k, std::uint32_t l, std::uint64_t t, uint32_t receiver, OTF2_CommRef comm,
          uint32_t tag, uint64_t length) {
  k.send(l, t, comm, receiver, tag, length, kBlocking);
}
void isend(EventSink& k, std::uint32_t l, std::uint64_t t, uint32_t receiver, OTF2_CommRef comm,
           uint32_t tag, uint64_t length, uint64_t request) {
  k.send(l, t, comm, receiver, tag, length, request);
}
void isend_complete(EventSink& k, std::uint32_t l, std::uint64_t t, uint64_t request) {
  k.isend_complete(l, t, request);
}
void recv(EventSink& k, std::uint32_t l, std::uint64_t t, uint32_t sender, OTF2_CommRef comm,
          uint32_t tag, uint64_t length) {
  k.recv(l, t, comm, sender, tag, length, kBlocking);
}
void irecv_request(EventSink& k, std::uint32_t l, std::uint64_t t, uint64_t request) {
  k.irecv_request(l, t, request);
}
void irecv(EventSink& k, std::uint32_t l, std::uint64_t t, uint32_t sender, OTF2_CommRef comm,
           uint32_t tag, uint64_t length, uint64_t request) {
  k.recv(l, t, comm, sender, tag, length, request);
}
void cancelled(EventSink& k, std::uint32_t l, std::uint64_t t, uint64_t request) {
  k.request_cancelled(l, t, request);
}
void coll_end(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_CollectiveOp op,
              OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received) {
  k.collective(l, t, op, comm, root, sent, received);
}
void coll_begin(EventSink& k, std::uint32_t l, std::uint64_t t) {
  k.collective_begin(l, t);
}
void nbc_request(EventSink& k, std::uint32_t l, std::uint64_t t, uint64_t request) {
  k.nbc_request(l, t, request);
}
void nbc_complete(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_CollectiveOp op,
                  OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received,
                  uint64_t request) {
  k.nbc_complete(l, t, op, comm, root, sent, received, request);
}
void fork(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_Paradigm, uint32_t) {
  k.thread_fork(l, t);
}
void join(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_Paradigm) {
  k.thread_join(l, t);
}
void team_begin(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_CommRef team) {
  k.team_begin(l, t, team);
}
void team_end(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_CommRef team) {
  k.team_end(l, t, team);
}
void acquire(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_Paradigm model, uint32_t lock,
             uint32_t order) {
  k.lock_acquire(l, t, model, lock, order);
}
void release(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_Paradigm model, uint32_t lock,
             uint32_t order) {
  k.lock_release(l, t, model, lock, order);
}
void task_create(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_CommRef team,
                 uint32_t creator, uint32_t generation) {
  k.task_create(l, t, team, creator, generation);
}
void task_switch(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_CommRef team,
                 uint32_t creator, uint32_t generation) {
  k.task_switch(l, t, team, creator, generation);
}
void task_complete(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_CommRef team,
                   uint32_t creator, uint32_t generation) {
  k.task_complete(l, t, team, creator, generation);
}
void metric(EventSink& k, std::uint32_t l, std::uint64_t t, OTF2_MetricRef metric, uint8_t n,
            const OTF2_Type* types, const OTF2_MetricValue* values) {
  k.metric(l, t, metric, n, types, values);
}

// The reader callbacks of a `Deliver` function above: OTF2's global reader names the location by
// its id; the merge (format/event_merge.h) by its input index. Events of locations the
// definitions do not list are counted, not delivered.
template <auto Deliver> struct Callbacks;
template <class... Fields, void (*Deliver)(EventSink&, std::uint32_t, std::uint64_t, Fields...)>
struct Callbacks<Deliver> {
  static void fan_out(ScanState& s, std::uint32_t l, std::uint64_t t, Fields... fields) {
    s.count(t);
    if (l == UINT32_MAX) return;
    for (EventSink* k : *s.sinks)
      Deliver(*k, l, t, fields...);
  }
  static OTF2_CallbackCode global(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                  OTF2_AttributeList*, Fields... fields) {
    ScanState& s = of(u);
    fan_out(s, s.by_id(id), t, fields...);
    return OTF2_CALLBACK_SUCCESS;
  }
  static OTF2_CallbackCode merged(OTF2_LocationRef input, OTF2_TimeStamp t, uint64_t, void* u,
                                  OTF2_AttributeList*, Fields... fields) {
    ScanState& s = of(u);
    fan_out(s, (*s.by_input)[input], t, fields...);
    return OTF2_CALLBACK_SUCCESS;
  }
};

// The merge's next input: its location's state is fetched while the current event is handled.
void on_next_input(std::uint32_t input, void* u) {
  ScanState& s = of(u);
  const std::uint32_t l = (*s.by_input)[input];
  for (EventSink* k : *s.sinks)
    k->prefetch(l);
}

// Events a report does not show still count as read.
OTF2_CallbackCode on_unknown(OTF2_LocationRef, OTF2_TimeStamp t, void* u, OTF2_AttributeList*) {
  of(u).count(t);
  return OTF2_CALLBACK_SUCCESS;
}
void on_other(void* u, OTF2_TimeStamp t, int) {
  of(u).count(t);
}

void on_window_end(std::uint64_t end, void* u) {
  of(u).read_before(end);
}

void register_global(OTF2_GlobalEvtReaderCallbacks* cbs) {
  OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(cbs, on_unknown);
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cbs, Callbacks<enter>::global);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cbs, Callbacks<leave>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(cbs, Callbacks<send>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cbs, Callbacks<isend>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(cbs, Callbacks<isend_complete>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(cbs, Callbacks<recv>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, Callbacks<irecv_request>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cbs, Callbacks<irecv>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(cbs, Callbacks<cancelled>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, Callbacks<coll_end>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, Callbacks<coll_begin>::global);
  OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(
      cbs, Callbacks<nbc_request>::global);
  OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(
      cbs, Callbacks<nbc_complete>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadForkCallback(cbs, Callbacks<fork>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadJoinCallback(cbs, Callbacks<join>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTeamBeginCallback(cbs, Callbacks<team_begin>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTeamEndCallback(cbs, Callbacks<team_end>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadAcquireLockCallback(cbs, Callbacks<acquire>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadReleaseLockCallback(cbs, Callbacks<release>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTaskCreateCallback(cbs, Callbacks<task_create>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTaskSwitchCallback(cbs, Callbacks<task_switch>::global);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTaskCompleteCallback(cbs,
                                                              Callbacks<task_complete>::global);
  OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cbs, Callbacks<metric>::global);
}

format::EventDecodeCallbacks merged_callbacks() {
  format::EventDecodeCallbacks c;
  c.Enter = Callbacks<enter>::merged;
  c.Leave = Callbacks<leave>::merged;
  c.MpiSend = Callbacks<send>::merged;
  c.MpiIsend = Callbacks<isend>::merged;
  c.MpiIsendComplete = Callbacks<isend_complete>::merged;
  c.MpiRecv = Callbacks<recv>::merged;
  c.MpiIrecvRequest = Callbacks<irecv_request>::merged;
  c.MpiIrecv = Callbacks<irecv>::merged;
  c.MpiRequestCancelled = Callbacks<cancelled>::merged;
  c.MpiCollectiveEnd = Callbacks<coll_end>::merged;
  c.MpiCollectiveBegin = Callbacks<coll_begin>::merged;
  c.NonBlockingCollectiveRequest = Callbacks<nbc_request>::merged;
  c.NonBlockingCollectiveComplete = Callbacks<nbc_complete>::merged;
  c.ThreadFork = Callbacks<fork>::merged;
  c.ThreadJoin = Callbacks<join>::merged;
  c.ThreadTeamBegin = Callbacks<team_begin>::merged;
  c.ThreadTeamEnd = Callbacks<team_end>::merged;
  c.ThreadAcquireLock = Callbacks<acquire>::merged;
  c.ThreadReleaseLock = Callbacks<release>::merged;
  c.ThreadTaskCreate = Callbacks<task_create>::merged;
  c.ThreadTaskSwitch = Callbacks<task_switch>::merged;
  c.ThreadTaskComplete = Callbacks<task_complete>::merged;
  return c;
}

// The merge: every location's event file decoded directly, in OTF2's order (ties by location id).
std::uint64_t scan_merged(const std::string& event_dir, std::uint64_t chunk_size,
                          const std::vector<format::IdMaps>& maps, ScanState& state) {
  const std::vector<Location>& locations = state.defs->locations;
  std::vector<std::uint32_t> by_input(locations.size());
  std::iota(by_input.begin(), by_input.end(), 0u);
  std::sort(by_input.begin(), by_input.end(),
            [&](std::uint32_t a, std::uint32_t b) { return locations[a].id < locations[b].id; });
  // A location whose empty event file its writer left out is not an input.
  by_input.erase(std::remove_if(by_input.begin(), by_input.end(),
                                [&](std::uint32_t l) {
                                  return format::empty_event_file_left_out(
                                      event_dir, locations[l].id, locations[l].events);
                                }),
                 by_input.end());
  std::vector<format::EventMerge::Input> inputs;
  inputs.reserve(locations.size());
  for (std::uint32_t l : by_input)
    inputs.push_back({locations[l].id, maps[l].empty() ? nullptr : &maps[l]});
  state.by_input = &by_input;
  format::EventMerge merge(event_dir, inputs, static_cast<size_t>(chunk_size));
  if (state.time_order)
    return merge.run(merged_callbacks(), Callbacks<metric>::merged, on_other, &state,
                     on_next_input);
  const double density =
      static_cast<double>(std::max<std::uint64_t>(state.defs->total_events(), 1)) /
      static_cast<double>(std::max<std::uint64_t>(state.defs->trace_length, 1));
  const auto first =
      static_cast<std::uint64_t>(std::min(static_cast<double>(state.step) / density, 1e18));
  return merge.run_in_windows(merged_callbacks(), Callbacks<metric>::merged, on_other, &state,
                              on_window_end, first, state.step, on_next_input);
}

// OTF2's global reader keeps every location's event file open: raise the soft limit on open files
// as far as the hard one allows, or say what it must be.
void ensure_open_files(const std::string& archive, std::size_t locations) {
  const rlim_t needed = static_cast<rlim_t>(locations) + 64; // the tool's own files besides
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
      lim.rlim_cur >= needed)
    return;
  if (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= needed) {
    lim.rlim_cur = needed;
    if (::setrlimit(RLIMIT_NOFILE, &lim) == 0) return;
  }
  throw input_error("'" + archive + "': reading its " + std::to_string(locations) +
                    " locations through the OTF2 library keeps an event file open for each, "
                    "which needs " +
                    std::to_string(needed) + " open files, but the limit is " +
                    std::to_string(lim.rlim_max) + " (raise it with 'ulimit -n " +
                    std::to_string(needed) + "')");
}

// What OTF2 said about a call that returned no handle, if anything.
std::string otf2_detail() {
  return format::otf2_diagnostics_pending()
             ? " (" + format::otf2_cause(OTF2_ERROR_FILE_INTERACTION) + ")"
             : std::string();
}

// OTF2's global event reader: for archives whose event files cannot be decoded directly.
std::uint64_t scan_with_otf2(const std::string& archive, OTF2_Reader* reader, ScanState& state) {
  ensure_open_files(archive, state.defs->locations.size());
  for (const Location& l : state.defs->locations)
    OTF2_Reader_SelectLocation(reader, l.id);
  check_read(OTF2_Reader_OpenEvtFiles(reader), "'" + archive + "': opening the event files");
  for (const Location& l : state.defs->locations)
    if (!OTF2_Reader_GetEvtReader(reader, l.id))
      throw input_error("'" + archive + "': no event reader for location " + std::to_string(l.id) +
                        otf2_detail());
  OTF2_GlobalEvtReader* er = OTF2_Reader_GetGlobalEvtReader(reader);
  if (!er)
    throw input_error("'" + archive + "': creating the global event reader failed" + otf2_detail());
  OTF2_GlobalEvtReaderCallbacks* cbs = OTF2_GlobalEvtReaderCallbacks_New();
  register_global(cbs);
  const OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalEvtCallbacks(reader, er, cbs, &state);
  OTF2_GlobalEvtReaderCallbacks_Delete(cbs);
  check_read(rc, "'" + archive + "': registering event callbacks");
  uint64_t count = 0;
  check_read(OTF2_Reader_ReadAllGlobalEvents(reader, er, &count),
             "'" + archive + "': reading the events");
  OTF2_Reader_CloseGlobalEvtReader(reader, er);
  OTF2_Reader_CloseEvtFiles(reader);
  return count;
}

} // namespace

std::uint64_t scan_events(const std::string& archive, const ArchiveDefs& defs,
                          const std::vector<EventSink*>& sinks, const Progress& progress) {
  const format::ReaderPtr owned(open_reader(archive));
  OTF2_Reader* reader = owned.get();
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "'" + archive + "': serial reading");
  uint64_t event_chunk = 0, def_chunk = 0;
  OTF2_Reader_GetChunkSize(reader, &event_chunk, &def_chunk);
  const format::EventFileLayout layout =
      format::read_event_file_layout(reader, format::find_anchor(archive));
  // OTF2 selects a POSIX archive's locations as its readers open them (selecting each one searches
  // the list of those selected: quadratic), any other archive's must be selected first.
  if (layout.event_dir.empty())
    for (const Location& l : defs.locations)
      OTF2_Reader_SelectLocation(reader, l.id);
  // Local definitions carry the mapping tables (local region/comm ids -> global ones): for the
  // merge, or read by OTF2's reader for its own event readers. (A missing event file is named
  // when the merge opens it, as OTF2's reader would name it.)
  bool decodable = layout.decodable();
  std::vector<format::IdMaps> maps(defs.locations.size());
  {
    format::LocalDefinitionReader local_defs(reader, layout);
    std::vector<format::LocalDefinitions> read = local_defs.read_all_of(
        defs.locations, decodable ? format::Otf2Events::No : format::Otf2Events::Maybe);
    for (std::size_t i = 0; i < read.size(); ++i) {
      if (!read[i].error.empty()) throw input_error("'" + archive + "': " + read[i].error);
      decodable = decodable && !read[i].retimed;
      maps[i] = std::move(read[i].maps);
    }
    // OTF2's event readers take the tables and offsets of the files its reader has read: each
    // file with records that was parsed here goes to it too.
    if (!decodable)
      for (std::size_t i = 0; i < read.size(); ++i)
        if (!read[i].by_otf2 && (read[i].retimed || !maps[i].empty())) {
          format::LocalDefinitions d = local_defs.read(defs.locations[i].id, defs.locations[i].name,
                                                       format::Otf2Events::Maybe);
          if (!d.error.empty()) throw input_error("'" + archive + "': " + d.error);
        }
  }
  ScanState state{&defs, &sinks, &progress};
  state.time_order = std::any_of(sinks.begin(), sinks.end(),
                                 [](const EventSink* k) { return k->needs_time_order(); });
  // Windows (or steps between read_before() in time order) of kEventsPerVisit events per location
  // on average: in its run of a window a location's state stays in the cache, and what the sinks
  // keep for a step (messages in flight, calls whose waits are undecided) stays a few records per
  // location. The first window is as long as the archive's mean density says.
  constexpr std::uint64_t kEventsPerVisit = 16, kMinStep = 256;
  state.step = std::max<std::uint64_t>(kMinStep, kEventsPerVisit * defs.locations.size());
  for (EventSink* k : sinks)
    k->begin(state.time_order);
  const std::uint64_t count = decodable ? scan_merged(layout.event_dir, event_chunk, maps, state)
                                        : scan_with_otf2(archive, reader, state);
  for (EventSink* k : sinks)
    k->finish();
  return count;
}

} // namespace htrace::report
