// Point-to-point and collective records -> logical messages.
#include "location_reader.h"

#include <algorithm>

namespace htrace::correct {
namespace {

// Message ends are handed out by relations::PostedMessages in posting order.
OTF2_CallbackCode on_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                          uint64_t length) {
  HT_RECORD(u, t, MpiSend, a, receiver, comm, tag, length);
  r->p2p.send(r->sent_on(comm, receiver, tag), ev, r->keep_p2p());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, uint32_t receiver, OTF2_CommRef comm,
                           uint32_t tag, uint64_t length, uint64_t request) {
  HT_RECORD(u, t, MpiIsend, a, receiver, comm, tag, length, request);
  r->p2p.isend(r->sent_on(comm, receiver, tag), ev, request, r->keep_p2p());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                    OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, MpiIsendComplete, a, request);
  (void)ev;
  r->p2p.isend_complete(request, r->keep_p2p());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                          OTF2_AttributeList* a, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                          uint64_t length) {
  HT_RECORD(u, t, MpiRecv, a, sender, comm, tag, length);
  r->p2p.recv(r->received_on(comm, sender, tag), ev, r->keep_p2p());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                   OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, MpiIrecvRequest, a, request);
  (void)ev;
  r->p2p.irecv_request(request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                           OTF2_AttributeList* a, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                           uint64_t length, uint64_t request) {
  HT_RECORD(u, t, MpiIrecv, a, sender, comm, tag, length, request);
  r->p2p.irecv(r->received_on(comm, sender, tag), ev, request, r->keep_p2p());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_cancelled(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                               OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, MpiRequestCancelled, a, request);
  (void)ev;
  r->p2p.cancelled(request, r->keep_p2p());
  return OTF2_CALLBACK_SUCCESS;
}
// Collective calls are paired by relations::CollectiveCalls, which hands them out in begin order.
OTF2_CallbackCode on_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                OTF2_AttributeList* a) {
  HT_RECORD(u, t, MpiCollectiveBegin, a);
  r->coll_calls.begin(ev, r->in_neighborhood_collective());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                              OTF2_AttributeList* a, OTF2_CollectiveOp op, OTF2_CommRef comm,
                              uint32_t root, uint64_t sent, uint64_t received) {
  HT_RECORD(u, t, MpiCollectiveEnd, a, op, comm, root, sent, received);
  r->coll_calls.end(ev, op, comm, root, received, r->keep_coll());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_nbc_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                 OTF2_AttributeList* a, uint64_t request) {
  HT_RECORD(u, t, NonBlockingCollectiveRequest, a, request);
  r->coll_calls.request(ev, request, r->in_neighborhood_collective());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_nbc_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                  OTF2_AttributeList* a, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                  uint32_t root, uint64_t sent, uint64_t received,
                                  uint64_t request) {
  HT_RECORD(u, t, NonBlockingCollectiveComplete, a, op, comm, root, sent, received, request);
  r->coll_calls.complete(ev, op, comm, root, received, request, r->keep_coll());
  return OTF2_CALLBACK_SUCCESS;
}

} // namespace

void ProcessMatcher::resolve(LocationReader& r, LocalModel& m) {
  uint32_t me = r.process();
  r.loc_.links.reserve(r.loc_.links.size() + r.sends.size() + r.recvs.size() + 2 * r.colls.size());
  r.p2p.finish(r.keep_p2p()); // the ends in posting order
  for (const RawMessageEnd& s : r.sends) {
    if (s.peer == UINT32_MAX || s.peer == me) continue;
    P2PStream& st = m.channels.stream(me, s.peer, s.comm_tag);
    add_link(r.loc_, s.event, LinkRole::Contribute,
             m.channels.p2p(st, st.counts.next(relations::P2pSide::Send)), m);
  }
  for (const RawMessageEnd& x : r.recvs) {
    if (x.peer == UINT32_MAX || x.peer == me) continue;
    P2PStream& st = m.channels.stream(x.peer, me, x.comm_tag);
    add_link(r.loc_, x.event, LinkRole::Receive,
             m.channels.p2p(st, st.counts.next(relations::P2pSide::Receive)), m);
  }
  r.coll_calls.finish(r.keep_coll()); // the calls in begin order
  for (const RawColl& c : r.colls) {
    auto it = r.defs_.comms.find(static_cast<OTF2_CommRef>(c.comm));
    if (it == r.defs_.comms.end()) continue;
    auto rk = it->second.process_rank.find(me);
    if (rk == it->second.process_rank.end() || it->second.rank_process.size() < 2) continue;
    const uint64_t seq = collectives.next(static_cast<uint32_t>(c.comm));
    uint32_t id =
        m.channels.get({ChannelType::Collective, c.comm, seq, 0, 0}, MessageKind::Collective);
    Channel& ch = m.channels.channels[id];
    if (ch.slot == UINT32_MAX) {
      ch.slot = static_cast<uint32_t>(m.collectives.size());
      CollectiveInstance& inst = m.collectives.emplace_back();
      inst.pattern = format::collective_pattern(c.op);
      inst.root = c.root;
      inst.members = static_cast<uint32_t>(it->second.rank_process.size());
      inst.channel = id;
    }
    add_link(r.loc_, c.begin, LinkRole::Contribute, id, m);
    if (format::collective_end_waits(c.op, c.received))
      add_link(r.loc_, c.end, LinkRole::Receive, id, m);
  }
  sort_links(r.loc_);
}

// Links arrive as a few runs already in event order (sends, receives, collectives, each in
// record order), so merging the runs beats sorting them.
void sort_links(LocationModel& loc) {
  auto before = [](const Link& a, const Link& b) {
    return a.event != b.event ? a.event < b.event : a.role() < b.role();
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

void register_mpi_relations(format::EventDecodeCallbacks& cbs) {
  cbs.MpiSend = on_send;
  cbs.MpiIsend = on_isend;
  cbs.MpiIsendComplete = on_isend_complete;
  cbs.MpiRecv = on_recv;
  cbs.MpiIrecvRequest = on_irecv_request;
  cbs.MpiIrecv = on_irecv;
  cbs.MpiRequestCancelled = on_cancelled;
  cbs.MpiCollectiveBegin = on_coll_begin;
  cbs.MpiCollectiveEnd = on_coll_end;
  cbs.NonBlockingCollectiveRequest = on_nbc_request;
  cbs.NonBlockingCollectiveComplete = on_nbc_complete;
}

} // namespace htrace::correct
