#include "vite_export.h"

#include "archive_defs.h"
#include "format/anchor_file.h"
#include "format/otf2_library.h"
#include "format/record_tables.h"

#include <filesystem>
#include <map>
#include <otf2/otf2.h>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace htrace::report {
namespace {

namespace fs = std::filesystem;

struct Copier {
  OTF2_GlobalDefWriter* w = nullptr;
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  std::uint64_t delivered = 0;
  unsigned rewritten = 0;
  const std::map<OTF2_LocationRef, std::uint64_t>* events_written = nullptr;
  std::map<OTF2_Paradigm, std::vector<std::uint64_t>> comm_locations;
  std::string error;

  OTF2_CallbackCode done(OTF2_ErrorCode r) {
    ++delivered;
    if (r != OTF2_SUCCESS && rc == OTF2_SUCCESS) rc = r;
    return r == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
  }
};

Copier& of(void* u) {
  return *static_cast<Copier*>(u);
}

OTF2_CallbackCode clock(void* u, uint64_t res, uint64_t off, uint64_t len, uint64_t real) {
  return of(u).done(OTF2_GlobalDefWriter_WriteClockProperties(of(u).w, res, off, len, real));
}
OTF2_CallbackCode string(void* u, OTF2_StringRef self, const char* s) {
  return of(u).done(OTF2_GlobalDefWriter_WriteString(of(u).w, self, s));
}
OTF2_CallbackCode attribute(void* u, OTF2_AttributeRef self, OTF2_StringRef name,
                            OTF2_StringRef description, OTF2_Type type) {
  return of(u).done(OTF2_GlobalDefWriter_WriteAttribute(of(u).w, self, name, description, type));
}
OTF2_CallbackCode paradigm(void* u, OTF2_Paradigm p, OTF2_StringRef name, OTF2_ParadigmClass c) {
  return of(u).done(OTF2_GlobalDefWriter_WriteParadigm(of(u).w, p, name, c));
}
OTF2_CallbackCode paradigm_property(void* u, OTF2_Paradigm p, OTF2_ParadigmProperty prop,
                                    OTF2_Type type, OTF2_AttributeValue value) {
  return of(u).done(OTF2_GlobalDefWriter_WriteParadigmProperty(of(u).w, p, prop, type, value));
}
OTF2_CallbackCode tree_node(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
                            OTF2_StringRef cls, OTF2_SystemTreeNodeRef parent) {
  return of(u).done(OTF2_GlobalDefWriter_WriteSystemTreeNode(of(u).w, self, name, cls, parent));
}
OTF2_CallbackCode tree_node_property(void* u, OTF2_SystemTreeNodeRef node, OTF2_StringRef name,
                                     OTF2_Type type, OTF2_AttributeValue value) {
  return of(u).done(
      OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(of(u).w, node, name, type, value));
}
OTF2_CallbackCode tree_node_domain(void* u, OTF2_SystemTreeNodeRef node,
                                   OTF2_SystemTreeDomain domain) {
  return of(u).done(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(of(u).w, node, domain));
}
OTF2_CallbackCode location_group(void* u, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                 OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                 OTF2_LocationGroupRef creator) {
  return of(u).done(
      OTF2_GlobalDefWriter_WriteLocationGroup(of(u).w, self, name, type, parent, creator));
}
OTF2_CallbackCode location_group_property(void* u, OTF2_LocationGroupRef g, OTF2_StringRef name,
                                          OTF2_Type type, OTF2_AttributeValue value) {
  return of(u).done(OTF2_GlobalDefWriter_WriteLocationGroupProperty(of(u).w, g, name, type, value));
}
OTF2_CallbackCode location(void* u, OTF2_LocationRef self, OTF2_StringRef name,
                           OTF2_LocationType type, uint64_t events, OTF2_LocationGroupRef group) {
  // The number of events the copy holds (its BufferFlush records left out).
  auto written = of(u).events_written->find(self);
  if (written != of(u).events_written->end()) events = written->second;
  return of(u).done(OTF2_GlobalDefWriter_WriteLocation(of(u).w, self, name, type, events, group));
}
OTF2_CallbackCode location_property(void* u, OTF2_LocationRef l, OTF2_StringRef name,
                                    OTF2_Type type, OTF2_AttributeValue value) {
  return of(u).done(OTF2_GlobalDefWriter_WriteLocationProperty(of(u).w, l, name, type, value));
}
OTF2_CallbackCode region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canon,
                         OTF2_StringRef desc, OTF2_RegionRole role, OTF2_Paradigm p,
                         OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin, uint32_t end) {
  return of(u).done(OTF2_GlobalDefWriter_WriteRegion(of(u).w, self, name, canon, desc, role, p,
                                                     flags, file, begin, end));
}
OTF2_CallbackCode parameter(void* u, OTF2_ParameterRef self, OTF2_StringRef name,
                            OTF2_ParameterType type) {
  return of(u).done(OTF2_GlobalDefWriter_WriteParameter(of(u).w, self, name, type));
}

OTF2_CallbackCode group(void* u, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                        OTF2_Paradigm p, OTF2_GroupFlag flags, uint32_t n,
                        const uint64_t* members) {
  Copier& c = of(u);
  if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS) c.comm_locations[p].assign(members, members + n);
  if (type != OTF2_GROUP_TYPE_COMM_GROUP || (flags & OTF2_GROUP_FLAG_GLOBAL_MEMBERS))
    return c.done(OTF2_GlobalDefWriter_WriteGroup(c.w, self, name, type, p, flags, n, members));
  // Ranks -> location ids, through this paradigm's COMM_LOCATIONS group.
  auto base = c.comm_locations.find(p);
  if (base == c.comm_locations.end()) {
    c.error = "a communicator group precedes its COMM_LOCATIONS group";
    return OTF2_CALLBACK_INTERRUPT;
  }
  std::vector<uint64_t> locations(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (members[i] >= base->second.size()) {
      c.error = "group " + std::to_string(self) + " names rank " + std::to_string(members[i]) +
                " beyond its COMM_LOCATIONS group";
      return OTF2_CALLBACK_INTERRUPT;
    }
    locations[i] = base->second[members[i]];
  }
  ++c.rewritten;
  return c.done(OTF2_GlobalDefWriter_WriteGroup(c.w, self, name, OTF2_GROUP_TYPE_COMM_LOCATIONS, p,
                                                flags, n, locations.data()));
}

OTF2_CallbackCode comm(void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef g,
                       OTF2_CommRef parent, OTF2_CommFlag flags) {
  return of(u).done(OTF2_GlobalDefWriter_WriteComm(of(u).w, self, name, g, parent, flags));
}
OTF2_CallbackCode inter_comm(void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef a,
                             OTF2_GroupRef b, OTF2_CommRef common, OTF2_CommFlag flags) {
  return of(u).done(OTF2_GlobalDefWriter_WriteInterComm(of(u).w, self, name, a, b, common, flags));
}

/// Re-encodes one location's events unchanged through OTF2 (generated copy callbacks, every
/// record type), except the records ViTE 1.2 has no handler for and records of types this OTF2
/// does not know.
struct EventCopy final : format::EventSink {
  OTF2_EvtWriter* w = nullptr;
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  std::uint64_t flushes = 0, forks = 0, joins = 0, unknown = 0;
  OTF2_TimeStamp begin_record(OTF2_LocationRef, OTF2_TimeStamp t, int) override { return t; }
  OTF2_EvtWriter* writer(OTF2_LocationRef) override { return w; }
  OTF2_CallbackCode end_record(OTF2_ErrorCode r) override {
    if (r != OTF2_SUCCESS && rc == OTF2_SUCCESS) rc = r;
    return r == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
  }
};

EventCopy& copy_of(void* u) {
  return *static_cast<EventCopy*>(u);
}
OTF2_CallbackCode drop_flush(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u,
                             OTF2_AttributeList*, OTF2_TimeStamp) {
  ++copy_of(u).flushes;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode drop_fork(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u,
                            OTF2_AttributeList*, OTF2_Paradigm, uint32_t) {
  ++copy_of(u).forks;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode drop_join(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u,
                            OTF2_AttributeList*, OTF2_Paradigm) {
  ++copy_of(u).joins;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode drop_unknown(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u,
                               OTF2_AttributeList*) {
  ++copy_of(u).unknown;
  return OTF2_CALLBACK_SUCCESS;
}

/// Removes a half-written copy unless released.
struct TempDir {
  fs::path path;
  bool keep = false;
  ~TempDir() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

} // namespace

ViteCopy write_vite_copy(const std::string& archive, const std::string& out) {
  const fs::path anchor = format::find_anchor(archive);
  const std::string stem = anchor.stem().string();
  std::error_code ec;
  if (fs::exists(out, ec)) throw output_error("'" + out + "' exists (choose a new directory)");
  OTF2_Reader* reader = open_reader(archive);
  struct ReaderCloser {
    OTF2_Reader* r;
    ~ReaderCloser() { OTF2_Reader_Close(r); }
  } reader_closer{reader};
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "'" + archive + "': serial reading");
  uint64_t evt_chunk = 0, def_chunk = 0;
  check_read(OTF2_Reader_GetChunkSize(reader, &evt_chunk, &def_chunk),
             "'" + archive + "': chunk sizes");

  TempDir tmp{fs::path(out).string() + ".tmp." + std::to_string(getpid())};
  fs::remove_all(tmp.path, ec);
  OTF2_Archive* a =
      OTF2_Archive_Open(tmp.path.c_str(), stem.c_str(), OTF2_FILEMODE_WRITE, evt_chunk, def_chunk,
                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!a) throw output_error("'" + out + "': cannot create the archive");
  struct ArchiveCloser {
    OTF2_Archive* a;
    ~ArchiveCloser() {
      if (a) OTF2_Archive_Close(a);
    }
  } archive_closer{a};
  check_write(OTF2_Archive_SetFlushCallbacks(a, &format::kFlushAlways, nullptr),
              "'" + out + "': flush callbacks");
  check_write(OTF2_Archive_SetSerialCollectiveCallbacks(a), "'" + out + "': serial writing");
  // Anchor file: creator, description, machine and every property as they were.
  char* text = nullptr;
  if (OTF2_Reader_GetCreator(reader, &text) == OTF2_SUCCESS && text) {
    OTF2_Archive_SetCreator(a, text);
    free(text);
  }
  if (OTF2_Reader_GetDescription(reader, &text) == OTF2_SUCCESS && text) {
    OTF2_Archive_SetDescription(a, text);
    free(text);
  }
  if (OTF2_Reader_GetMachineName(reader, &text) == OTF2_SUCCESS && text) {
    OTF2_Archive_SetMachineName(a, text);
    free(text);
  }
  uint32_t nprops = 0;
  char** names = nullptr;
  if (OTF2_Reader_GetPropertyNames(reader, &nprops, &names) == OTF2_SUCCESS && names) {
    for (uint32_t i = 0; i < nprops; ++i)
      if (OTF2_Reader_GetProperty(reader, names[i], &text) == OTF2_SUCCESS && text) {
        OTF2_Archive_SetProperty(a, names[i], text, true);
        free(text);
      }
    free(names);
  }

  // Events first, so that the location definitions can carry the number of events the copy
  // holds. OTF2's reader applies each location's mapping tables and clock offsets (its local
  // definitions) while reading; the copy's events hold global ids and times, so its local
  // definition files are empty.
  const ArchiveDefs defs = read_definitions(archive);
  ViteCopy result;
  std::map<OTF2_LocationRef, std::uint64_t> written;
  for (const Location& l : defs.locations)
    OTF2_Reader_SelectLocation(reader, l.id);
  const bool have_local_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  check_read(OTF2_Reader_OpenEvtFiles(reader), "'" + archive + "': opening the event files");
  check_write(OTF2_Archive_OpenEvtFiles(a), "'" + out + "': opening the event files");
  struct CallbacksDeleter {
    OTF2_EvtReaderCallbacks* c;
    ~CallbacksDeleter() { OTF2_EvtReaderCallbacks_Delete(c); }
  } event_callbacks{OTF2_EvtReaderCallbacks_New()};
  format::register_copy_events(event_callbacks.c);
  OTF2_EvtReaderCallbacks_SetBufferFlushCallback(event_callbacks.c, drop_flush);
  OTF2_EvtReaderCallbacks_SetThreadForkCallback(event_callbacks.c, drop_fork);
  OTF2_EvtReaderCallbacks_SetThreadJoinCallback(event_callbacks.c, drop_join);
  OTF2_EvtReaderCallbacks_SetUnknownCallback(event_callbacks.c, drop_unknown);
  for (const Location& l : defs.locations) {
    const std::string where = " of location " + std::to_string(l.id);
    if (have_local_defs)
      if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, l.id)) {
        uint64_t n = 0;
        const OTF2_ErrorCode drc = OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
        OTF2_Reader_CloseDefReader(reader, dr);
        check_read(drc, "'" + archive + "': reading the local definitions" + where);
      }
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, l.id);
    if (!er) throw input_error("'" + archive + "': no event reader" + where);
    EventCopy copy;
    copy.w = OTF2_Archive_GetEvtWriter(a, l.id);
    if (!copy.w) throw output_error("'" + out + "': cannot write the events" + where);
    check_read(OTF2_Reader_RegisterEvtCallbacks(reader, er, event_callbacks.c, &copy),
               "'" + archive + "': event callbacks");
    uint64_t n = 0;
    const OTF2_ErrorCode rrc = OTF2_Reader_ReadAllLocalEvents(reader, er, &n);
    OTF2_Reader_CloseEvtReader(reader, er);
    check_write(copy.rc, "'" + out + "': writing the events" + where);
    check_read(rrc, "'" + archive + "': reading the events" + where);
    uint64_t kept = 0;
    check_write(OTF2_EvtWriter_GetNumberOfEvents(copy.w, &kept), "'" + out + "': counting events");
    written[l.id] = kept;
    check_write(OTF2_Archive_CloseEvtWriter(a, copy.w),
                "'" + out + "': writing the events" + where);
    result.buffer_flushes += copy.flushes;
    result.thread_forks += copy.forks;
    result.thread_joins += copy.joins;
    result.unknown_records += copy.unknown;
  }
  if (have_local_defs) OTF2_Reader_CloseDefFiles(reader);
  OTF2_Reader_CloseEvtFiles(reader);
  check_write(OTF2_Archive_CloseEvtFiles(a), "'" + out + "': closing the event files");
  check_write(OTF2_Archive_OpenDefFiles(a), "'" + out + "': opening the local definition files");
  for (const Location& l : defs.locations) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(a, l.id);
    if (!dw) throw output_error("'" + out + "': cannot write local definitions");
    check_write(OTF2_Archive_CloseDefWriter(a, dw), "'" + out + "': writing local definitions");
  }
  check_write(OTF2_Archive_CloseDefFiles(a), "'" + out + "': closing the local definition files");

  Copier c;
  c.events_written = &written;
  c.w = OTF2_Archive_GetGlobalDefWriter(a);
  if (!c.w) throw output_error("'" + out + "': cannot write definitions");
  OTF2_GlobalDefReader* dr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!dr) throw input_error("'" + archive + "': no global definitions");
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, string);
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cbs, attribute);
  OTF2_GlobalDefReaderCallbacks_SetParadigmCallback(cbs, paradigm);
  OTF2_GlobalDefReaderCallbacks_SetParadigmPropertyCallback(cbs, paradigm_property);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cbs, tree_node);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodePropertyCallback(cbs, tree_node_property);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeDomainCallback(cbs, tree_node_domain);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cbs, location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(cbs, location_group_property);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, location);
  OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cbs, location_property);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, region);
  OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cbs, parameter);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, comm);
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cbs, inter_comm);
  const OTF2_ErrorCode reg = OTF2_Reader_RegisterGlobalDefCallbacks(reader, dr, cbs, &c);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  check_read(reg, "'" + archive + "': definition callbacks");
  uint64_t read = 0;
  const OTF2_ErrorCode rrc = OTF2_Reader_ReadAllGlobalDefinitions(reader, dr, &read);
  OTF2_Reader_CloseGlobalDefReader(reader, dr);
  if (!c.error.empty()) throw input_error("'" + archive + "': " + c.error);
  check_write(c.rc, "'" + out + "': writing the definitions");
  check_read(rrc, "'" + archive + "': reading the definitions");
  // Definitions of kinds without a callback are skipped silently by OTF2: refuse to drop any.
  if (read != c.delivered)
    throw input_error("'" + archive + "': " + std::to_string(read - c.delivered) +
                      " definitions of kinds the ViTE copy does not carry");
  check_write(OTF2_Archive_CloseGlobalDefWriter(a, c.w), "'" + out + "': closing the definitions");
  archive_closer.a = nullptr;
  check_write(OTF2_Archive_Close(a), "'" + out + "': closing the archive");

  fs::rename(tmp.path, out, ec);
  if (ec) throw output_error("'" + out + "': " + ec.message());
  tmp.keep = true;
  result.rewritten_groups = c.rewritten;
  return result;
}

} // namespace htrace::report
