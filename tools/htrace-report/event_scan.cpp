#include "event_scan.h"

#include "format/otf2_library.h"

#include <otf2/otf2.h>
#include <stdexcept>

namespace htrace::report {
namespace {

struct ScanState {
  const ArchiveDefs* defs;
  const std::vector<EventSink*>* sinks;
  const Progress* progress;
  std::uint64_t events = 0;

  /// Location index of an OTF2 location id; every event counts towards progress.
  std::uint32_t loc(OTF2_LocationRef id) {
    if ((++events & 0xffff) == 0 && *progress) (*progress)(events);
    auto it = defs->location_index.find(id);
    return it == defs->location_index.end() ? UINT32_MAX : it->second;
  }
};

ScanState& of(void* u) {
  return *static_cast<ScanState*>(u);
}

// Hands one event of location `id` to every sink as `deliver(sink, location index)`; events of
// locations the definitions do not list are skipped.
template <class Deliver> OTF2_CallbackCode fan_out(void* u, OTF2_LocationRef id, Deliver deliver) {
  ScanState& s = of(u);
  const std::uint32_t l = s.loc(id);
  if (l != UINT32_MAX)
    for (EventSink* k : *s.sinks)
      deliver(*k, l);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_any(OTF2_LocationRef id, OTF2_TimeStamp, void* u, OTF2_AttributeList*) {
  of(u).loc(id);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_enter(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.enter(l, t, region); });
}

OTF2_CallbackCode on_leave(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.leave(l, t, region); });
}

OTF2_CallbackCode on_send(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                          uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.send(l, t, comm, receiver, tag, length, kBlocking);
  });
}

OTF2_CallbackCode on_isend(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                           uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length,
                           uint64_t request) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.send(l, t, comm, receiver, tag, length, request);
  });
}

OTF2_CallbackCode on_isend_complete(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                    OTF2_AttributeList*, uint64_t request) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.isend_complete(l, t, request); });
}

OTF2_CallbackCode on_recv(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                          uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.recv(l, t, comm, sender, tag, length, kBlocking);
  });
}

OTF2_CallbackCode on_irecv_request(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                   OTF2_AttributeList*, uint64_t request) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.irecv_request(l, t, request); });
}

OTF2_CallbackCode on_irecv(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                           uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t length,
                           uint64_t request) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.recv(l, t, comm, sender, tag, length, request);
  });
}

OTF2_CallbackCode on_cancelled(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                               uint64_t request) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.request_cancelled(l, t, request); });
}

OTF2_CallbackCode on_coll_end(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                              OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent,
                              uint64_t received) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.collective(l, t, op, comm, root, sent, received);
  });
}

OTF2_CallbackCode on_coll_begin(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                OTF2_AttributeList*) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.collective_begin(l, t); });
}

OTF2_CallbackCode on_nbc_request(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                 OTF2_AttributeList*, uint64_t request) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.nbc_request(l, t, request); });
}

OTF2_CallbackCode on_nbc_complete(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                  OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                  uint32_t root, uint64_t sent, uint64_t received,
                                  uint64_t request) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.nbc_complete(l, t, op, comm, root, sent, received, request);
  });
}

OTF2_CallbackCode on_fork(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                          OTF2_Paradigm, uint32_t) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.thread_fork(l, t); });
}

OTF2_CallbackCode on_join(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                          OTF2_Paradigm) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.thread_join(l, t); });
}

OTF2_CallbackCode on_team_begin(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                                OTF2_CommRef team) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.team_begin(l, t, team); });
}

OTF2_CallbackCode on_team_end(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                              OTF2_CommRef team) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) { k.team_end(l, t, team); });
}

OTF2_CallbackCode on_acquire(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                             OTF2_Paradigm model, uint32_t lock, uint32_t order) {
  return fan_out(u, id,
                 [&](EventSink& k, std::uint32_t l) { k.lock_acquire(l, t, model, lock, order); });
}

OTF2_CallbackCode on_release(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                             OTF2_Paradigm model, uint32_t lock, uint32_t order) {
  return fan_out(u, id,
                 [&](EventSink& k, std::uint32_t l) { k.lock_release(l, t, model, lock, order); });
}

OTF2_CallbackCode on_task_create(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                 OTF2_AttributeList*, OTF2_CommRef team, uint32_t creator,
                                 uint32_t generation) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.task_create(l, t, team, creator, generation);
  });
}

OTF2_CallbackCode on_task_switch(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                 OTF2_AttributeList*, OTF2_CommRef team, uint32_t creator,
                                 uint32_t generation) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.task_switch(l, t, team, creator, generation);
  });
}

OTF2_CallbackCode on_task_complete(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                                   OTF2_AttributeList*, OTF2_CommRef team, uint32_t creator,
                                   uint32_t generation) {
  return fan_out(u, id, [&](EventSink& k, std::uint32_t l) {
    k.task_complete(l, t, team, creator, generation);
  });
}

OTF2_CallbackCode on_metric(OTF2_LocationRef id, OTF2_TimeStamp t, void* u, OTF2_AttributeList*,
                            OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  return fan_out(u, id,
                 [&](EventSink& k, std::uint32_t l) { k.metric(l, t, metric, n, types, values); });
}

// Events a report does not show still count as read.
OTF2_CallbackCode on_unknown(OTF2_LocationRef id, OTF2_TimeStamp t, void* u,
                             OTF2_AttributeList* a) {
  return on_any(id, t, u, a);
}

} // namespace

std::uint64_t scan_events(const std::string& archive, const ArchiveDefs& defs,
                          const std::vector<EventSink*>& sinks, const Progress& progress) {
  const format::ReaderPtr owned(open_reader(archive));
  OTF2_Reader* reader = owned.get();
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "'" + archive + "': serial reading");
  for (const Location& l : defs.locations)
    OTF2_Reader_SelectLocation(reader, l.id);
  // Local definitions carry the mapping tables (local region/comm ids -> global ones).
  const bool have_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  check_read(OTF2_Reader_OpenEvtFiles(reader), "'" + archive + "': opening the event files");
  for (const Location& l : defs.locations) {
    if (have_defs) {
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, l.id);
      if (dr) {
        uint64_t n = 0;
        OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
        OTF2_Reader_CloseDefReader(reader, dr);
      }
    }
    if (!OTF2_Reader_GetEvtReader(reader, l.id))
      throw input_error("'" + archive + "': no event reader for location " + std::to_string(l.id));
  }
  if (have_defs) OTF2_Reader_CloseDefFiles(reader);

  ScanState state{&defs, &sinks, &progress, 0};
  OTF2_GlobalEvtReader* er = OTF2_Reader_GetGlobalEvtReader(reader);
  if (!er) throw input_error("'" + archive + "': creating the global event reader failed");
  OTF2_GlobalEvtReaderCallbacks* cbs = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(cbs, on_unknown);
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cbs, on_enter);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cbs, on_leave);
  OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(cbs, on_send);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cbs, on_isend);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(cbs, on_isend_complete);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(cbs, on_recv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, on_irecv_request);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cbs, on_irecv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(cbs, on_cancelled);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, on_coll_end);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, on_coll_begin);
  OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cbs, on_nbc_request);
  OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cbs, on_nbc_complete);
  OTF2_GlobalEvtReaderCallbacks_SetThreadForkCallback(cbs, on_fork);
  OTF2_GlobalEvtReaderCallbacks_SetThreadJoinCallback(cbs, on_join);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTeamBeginCallback(cbs, on_team_begin);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTeamEndCallback(cbs, on_team_end);
  OTF2_GlobalEvtReaderCallbacks_SetThreadAcquireLockCallback(cbs, on_acquire);
  OTF2_GlobalEvtReaderCallbacks_SetThreadReleaseLockCallback(cbs, on_release);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTaskCreateCallback(cbs, on_task_create);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTaskSwitchCallback(cbs, on_task_switch);
  OTF2_GlobalEvtReaderCallbacks_SetThreadTaskCompleteCallback(cbs, on_task_complete);
  OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cbs, on_metric);
  const OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalEvtCallbacks(reader, er, cbs, &state);
  OTF2_GlobalEvtReaderCallbacks_Delete(cbs);
  check_read(rc, "'" + archive + "': registering event callbacks");
  uint64_t count = 0;
  check_read(OTF2_Reader_ReadAllGlobalEvents(reader, er, &count),
             "'" + archive + "': reading the events");
  OTF2_Reader_CloseGlobalEvtReader(reader, er);
  OTF2_Reader_CloseEvtFiles(reader);
  for (EventSink* k : sinks)
    k->finish();
  return count;
}

} // namespace htrace::report
