// See trace_times.h. OTF2's reader applies mapping tables and clock offsets of the local
// definitions itself, so the times here are what any OTF2 reader (a viewer) shows.
#include "trace_times.h"

#include <algorithm>
#include <map>
#include <otf2/otf2.h>
#include <stdexcept>
#include <sys/stat.h>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace fidelity {
namespace {

void check(OTF2_ErrorCode code, const std::string& archive, const char* what) {
  if (code != OTF2_SUCCESS)
    throw std::runtime_error("'" + archive + "': " + what + ": " + OTF2_Error_GetName(code));
}

// An archive directory or its anchor file.
std::string anchor_of(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + "/traces.otf2";
  return path;
}

struct Group {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  std::vector<uint64_t> members;
};

// Communicator: its group, and for an intercommunicator the second group.
struct Comm {
  OTF2_GroupRef group = OTF2_UNDEFINED_GROUP;
  OTF2_GroupRef remote = OTF2_UNDEFINED_GROUP;
};

struct Definitions {
  std::map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_RegionRef, OTF2_StringRef> region_names;
  std::map<OTF2_LocationRef, OTF2_LocationGroupRef> location_group;
  std::map<OTF2_GroupRef, Group> groups;
  std::map<OTF2_CommRef, Comm> comms;
};

OTF2_CallbackCode on_string(void* data, OTF2_StringRef self, const char* text) {
  static_cast<Definitions*>(data)->strings[self] = text ? text : "";
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_region(void* data, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                            OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag,
                            OTF2_StringRef, uint32_t, uint32_t) {
  static_cast<Definitions*>(data)->region_names[self] = name;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_location(void* data, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType,
                              uint64_t, OTF2_LocationGroupRef group) {
  static_cast<Definitions*>(data)->location_group[self] = group;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_group(void* data, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                           OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t count,
                           const uint64_t* members) {
  static_cast<Definitions*>(data)->groups[self] = {type, paradigm, {members, members + count}};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_comm(void* data, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group,
                          OTF2_CommRef, OTF2_CommFlag) {
  static_cast<Definitions*>(data)->comms[self] = {group, OTF2_UNDEFINED_GROUP};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_inter_comm(void* data, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef a,
                                OTF2_GroupRef b, OTF2_CommRef, OTF2_CommFlag) {
  static_cast<Definitions*>(data)->comms[self] = {a, b};
  return OTF2_CALLBACK_SUCCESS;
}

Definitions read_definitions(OTF2_Reader* reader, const std::string& archive) {
  Definitions defs;
  OTF2_GlobalDefReader* def_reader = OTF2_Reader_GetGlobalDefReader(reader);
  if (!def_reader) throw std::runtime_error("'" + archive + "': no global definitions");
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, on_string);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, on_region);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, on_location);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, on_comm);
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cbs, on_inter_comm);
  check(OTF2_Reader_RegisterGlobalDefCallbacks(reader, def_reader, cbs, &defs), archive,
        "registering definition callbacks");
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  uint64_t count = 0;
  check(OTF2_Reader_ReadAllGlobalDefinitions(reader, def_reader, &count), archive,
        "reading global definitions");
  OTF2_Reader_CloseGlobalDefReader(reader, def_reader);
  return defs;
}

// World ranks: the MPI COMM_LOCATIONS group lists each rank's own location; every other location
// (a thread) belongs to the rank of the master location in its location group.
void assign_world_ranks(const Definitions& defs, std::vector<Location>& locations) {
  std::map<OTF2_LocationRef, int> rank_of_location;
  for (const auto& [ref, group] : defs.groups)
    if (group.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && group.paradigm == OTF2_PARADIGM_MPI)
      for (size_t r = 0; r < group.members.size(); ++r)
        rank_of_location[group.members[r]] = int(r);
  std::map<OTF2_LocationGroupRef, int> rank_of_process;
  for (const auto& [location, rank] : rank_of_location) {
    auto it = defs.location_group.find(location);
    if (it != defs.location_group.end()) rank_of_process[it->second] = rank;
  }
  for (Location& loc : locations) {
    auto own = rank_of_location.find(loc.id);
    loc.master = own != rank_of_location.end();
    if (loc.master) {
      loc.world_rank = own->second;
      continue;
    }
    auto group = defs.location_group.find(loc.id);
    if (group != defs.location_group.end()) {
      auto process = rank_of_process.find(group->second);
      if (process != rank_of_process.end()) loc.world_rank = process->second;
    }
  }
}

// A p2p event waiting for its partner: location index and event position, and for a receive the
// position at which it was posted (an Irecv's request), which decides MPI's matching order.
struct Endpoint {
  uint32_t location, position;
  uint64_t posted;
};

// (sender world rank, receiver world rank, communicator, tag): MPI's non-overtaking order holds
// within one such channel.
using ChannelKey = std::tuple<int, int, uint64_t, uint32_t>;

struct Channel {
  std::vector<Endpoint> sends, receives;
};

struct ReadState {
  const Definitions* defs = nullptr;
  std::vector<Location>* locations = nullptr;
  uint32_t current = 0; // index of the location being read
  std::unordered_map<OTF2_RegionRef, bool> is_probe;
  std::unordered_map<uint64_t, uint64_t> irecv_posted; // request id -> position (current location)
  std::map<ChannelKey, Channel> channels;
  uint64_t unresolved = 0;

  Location& location() { return (*locations)[current]; }

  // World rank of communicator rank `rank`, seen from world rank `me`; -1 if unknown.
  int peer(OTF2_CommRef comm_ref, int me, uint32_t rank) const {
    auto comm = defs->comms.find(comm_ref);
    if (comm == defs->comms.end()) return -1;
    auto group_of = [&](OTF2_GroupRef ref) -> const Group* {
      auto it = defs->groups.find(ref);
      return it == defs->groups.end() ? nullptr : &it->second;
    };
    const Group* local = group_of(comm->second.group);
    const Group* remote = group_of(comm->second.remote);
    if (!local) return -1;
    if (local->type == OTF2_GROUP_TYPE_COMM_SELF) return rank == 0 ? me : -1;
    const Group* target = local;
    if (remote) { // intercommunicator: ranks name the group that does not hold `me`
      const bool in_local = std::find(local->members.begin(), local->members.end(), uint64_t(me)) !=
                            local->members.end();
      target = in_local ? remote : local;
    }
    // COMM_GROUP members are indices into the COMM_LOCATIONS group, i.e. world ranks.
    return rank < target->members.size() ? int(target->members[rank]) : -1;
  }
};

uint64_t position_of(ReadState& s) {
  return s.location().times.size() - 1;
}

// Every event: keep its time. The template fits every OTF2_EvtReaderCallback_* signature (their
// first five parameters are the same), so one definition serves all event types.
template <typename... Fields>
OTF2_CallbackCode on_event(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* data,
                           OTF2_AttributeList*, Fields...) {
  static_cast<ReadState*>(data)->location().times.push_back(time);
  return OTF2_CALLBACK_SUCCESS;
}

template <typename... Fields>
void install(OTF2_ErrorCode (*setter)(OTF2_EvtReaderCallbacks*,
                                      OTF2_CallbackCode (*)(OTF2_LocationRef, OTF2_TimeStamp,
                                                            uint64_t, void*, OTF2_AttributeList*,
                                                            Fields...)),
             OTF2_EvtReaderCallbacks* cbs) {
  setter(cbs, &on_event<Fields...>);
}

OTF2_CallbackCode on_unknown(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*,
                             OTF2_AttributeList*) {
  // A record type newer than this OTF2: its timestamp cannot be compared, so refuse the archive.
  return OTF2_CALLBACK_INTERRUPT;
}

OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* data,
                           OTF2_AttributeList* attrs, OTF2_RegionRef region) {
  on_event(loc, time, pos, data, attrs);
  auto& s = *static_cast<ReadState*>(data);
  auto it = s.is_probe.find(region);
  if (it != s.is_probe.end() && it->second)
    s.location().probe_enters.push_back(uint32_t(position_of(s)));
  return OTF2_CALLBACK_SUCCESS;
}

void add_send(ReadState& s, uint32_t receiver, OTF2_CommRef comm, uint32_t tag) {
  const int me = s.location().world_rank, to = s.peer(comm, me, receiver);
  if (me < 0 || to < 0) {
    ++s.unresolved;
    return;
  }
  const uint32_t pos = uint32_t(position_of(s));
  s.channels[{me, to, comm, tag}].sends.push_back({s.current, pos, pos});
}

void add_receive(ReadState& s, uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t posted) {
  const int me = s.location().world_rank, from = s.peer(comm, me, sender);
  if (me < 0 || from < 0) {
    ++s.unresolved;
    return;
  }
  s.channels[{from, me, comm, tag}].receives.push_back(
      {s.current, uint32_t(position_of(s)), posted});
}

OTF2_CallbackCode on_send(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* data,
                          OTF2_AttributeList* attrs, uint32_t receiver, OTF2_CommRef comm,
                          uint32_t tag, uint64_t) {
  on_event(loc, time, pos, data, attrs);
  add_send(*static_cast<ReadState*>(data), receiver, comm, tag);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_isend(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* data,
                           OTF2_AttributeList* attrs, uint32_t receiver, OTF2_CommRef comm,
                           uint32_t tag, uint64_t, uint64_t) {
  on_event(loc, time, pos, data, attrs);
  add_send(*static_cast<ReadState*>(data), receiver, comm, tag);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_recv(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* data,
                          OTF2_AttributeList* attrs, uint32_t sender, OTF2_CommRef comm,
                          uint32_t tag, uint64_t) {
  on_event(loc, time, pos, data, attrs);
  auto& s = *static_cast<ReadState*>(data);
  add_receive(s, sender, comm, tag, position_of(s));
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_irecv_request(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos,
                                   void* data, OTF2_AttributeList* attrs, uint64_t request) {
  on_event(loc, time, pos, data, attrs);
  auto& s = *static_cast<ReadState*>(data);
  s.irecv_posted[request] = position_of(s);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_irecv(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void* data,
                           OTF2_AttributeList* attrs, uint32_t sender, OTF2_CommRef comm,
                           uint32_t tag, uint64_t, uint64_t request) {
  on_event(loc, time, pos, data, attrs);
  auto& s = *static_cast<ReadState*>(data);
  // An Irecv is matched in the order it was posted (its request), not completed.
  auto posted = s.irecv_posted.find(request);
  const uint64_t at = posted != s.irecv_posted.end() ? posted->second : position_of(s);
  if (posted != s.irecv_posted.end()) s.irecv_posted.erase(posted);
  add_receive(s, sender, comm, tag, at);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_EvtReaderCallbacks* make_event_callbacks(const ReadOptions& options) {
  OTF2_EvtReaderCallbacks* cbs = OTF2_EvtReaderCallbacks_New();
#define FIDELITY_EVENT_TYPE(type) install(OTF2_EvtReaderCallbacks_Set##type##Callback, cbs);
#include "fidelity_event_types.inc"
#undef FIDELITY_EVENT_TYPE
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cbs, on_unknown);
  if (!options.probe_region.empty()) OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, on_enter);
  if (options.messages) {
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, on_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, on_isend);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cbs, on_recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, on_irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cbs, on_irecv);
  }
  return cbs;
}

// Pairs the n-th send with the n-th posted receive of every channel.
void match_messages(ReadState& s, Trace& trace) {
  for (auto& [key, channel] : s.channels) {
    auto& recvs = channel.receives;
    std::stable_sort(recvs.begin(), recvs.end(), [](const Endpoint& a, const Endpoint& b) {
      return std::tie(a.location, a.posted) < std::tie(b.location, b.posted);
    });
    const size_t n = std::min(channel.sends.size(), recvs.size());
    for (size_t i = 0; i < n; ++i)
      trace.messages.push_back({channel.sends[i].location, channel.sends[i].position,
                                recvs[i].location, recvs[i].position});
    trace.unmatched += channel.sends.size() + recvs.size() - 2 * n;
  }
}

void read_local_definitions(OTF2_Reader* reader, OTF2_LocationRef id) {
  // Reading a location's local definitions lets the reader apply its mapping tables and clock
  // offsets; an archive written without them has no local definition file, which is fine.
  OTF2_DefReader* def_reader = OTF2_Reader_GetDefReader(reader, id);
  if (!def_reader) return;
  uint64_t count = 0;
  OTF2_Reader_ReadAllLocalDefinitions(reader, def_reader, &count);
  OTF2_Reader_CloseDefReader(reader, def_reader);
}

} // namespace

Trace read_trace(const std::string& archive, const ReadOptions& options) {
  OTF2_Reader* reader = OTF2_Reader_Open(anchor_of(archive).c_str());
  if (!reader) throw std::runtime_error("'" + archive + "': not an OTF2 archive");
  check(OTF2_Reader_SetSerialCollectiveCallbacks(reader), archive, "serial reading");
  const Definitions defs = read_definitions(reader, archive);

  Trace trace;
  for (const auto& [id, group] : defs.location_group) {
    Location location;
    location.id = id;
    trace.locations.push_back(std::move(location));
  }
  assign_world_ranks(defs, trace.locations);

  ReadState state;
  state.defs = &defs;
  state.locations = &trace.locations;
  for (const auto& [region, name] : defs.region_names) {
    auto text = defs.strings.find(name);
    state.is_probe[region] = text != defs.strings.end() && text->second == options.probe_region;
  }

  for (const Location& loc : trace.locations)
    OTF2_Reader_SelectLocation(reader, loc.id);
  const bool have_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  check(OTF2_Reader_OpenEvtFiles(reader), archive, "opening event files");
  if (have_defs) {
    for (const Location& loc : trace.locations)
      read_local_definitions(reader, loc.id);
    OTF2_Reader_CloseDefFiles(reader);
  }

  OTF2_EvtReaderCallbacks* cbs = make_event_callbacks(options);
  for (uint32_t i = 0; i < trace.locations.size(); ++i) {
    state.current = i;
    state.irecv_posted.clear();
    OTF2_EvtReader* evt = OTF2_Reader_GetEvtReader(reader, trace.locations[i].id);
    if (!evt) throw std::runtime_error("'" + archive + "': no event reader for a location");
    check(OTF2_Reader_RegisterEvtCallbacks(reader, evt, cbs, &state), archive,
          "registering event callbacks");
    uint64_t count = 0;
    check(OTF2_Reader_ReadAllLocalEvents(reader, evt, &count), archive,
          "reading events (a record type unknown to this OTF2?)");
    OTF2_Reader_CloseEvtReader(reader, evt);
  }
  OTF2_EvtReaderCallbacks_Delete(cbs);
  OTF2_Reader_CloseEvtFiles(reader);
  OTF2_Reader_Close(reader);

  if (options.messages) match_messages(state, trace);
  trace.unresolved = state.unresolved;
  return trace;
}

} // namespace fidelity
