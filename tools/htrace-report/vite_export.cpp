#include "vite_export.h"

#include "archive_defs.h"
#include "format/anchor_file.h"
#include "format/event_file.h"
#include "format/file_copy.h"
#include "format/file_prefetch.h"
#include "format/local_definitions.h"
#include "format/otf2_library.h"
#include "format/record_tables.h"
#include "metric_defs.h"
#include "vite_contents.h"
#include "vite_export_events.h"

#include <filesystem>
#include <map>
#include <optional>
#include <otf2/otf2.h>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace htrace::report {
namespace {

namespace fs = std::filesystem;

/// Copies the global definitions through format::register_copy_defs, leaving out the kinds
/// vite_contents.h names, with two exceptions written here: MPI communicator groups (as location
/// lists) and locations (with the number of events the copy holds).
class DefCopy final : public format::DefSink {
public:
  DefCopy(OTF2_GlobalDefWriter* w, const std::map<OTF2_LocationRef, std::uint64_t>& events_written)
      : w_(w), events_written_(events_written), left_out_(format::def_record_type_count()) {
    for (int type = 0; type < format::def_record_type_count(); ++type)
      carried_.push_back(vite_carries_definition(format::def_record_name(type)));
  }
  OTF2_GlobalDefWriter* writer() override { return carry_ ? w_ : nullptr; }
  void count(int type) override {
    ++delivered;
    carry_ = carried_[static_cast<std::size_t>(type)];
    if (!carry_) ++left_out_[static_cast<std::size_t>(type)];
  }
  OTF2_CallbackCode result(OTF2_ErrorCode r) override {
    if (r != OTF2_SUCCESS && rc == OTF2_SUCCESS) rc = r;
    return r == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
  }
  void adjust_clock_properties(uint64_t*, uint64_t*, uint64_t*, uint64_t*) override {}

  OTF2_CallbackCode group(OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                          OTF2_Paradigm p, OTF2_GroupFlag flags, uint32_t n,
                          const uint64_t* members);
  OTF2_CallbackCode location(OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                             uint64_t events, OTF2_LocationGroupRef group);
  /// Definitions left out, by kind.
  void add_left_out(std::map<std::string, std::uint64_t>& by_kind) const {
    for (std::size_t type = 0; type < left_out_.size(); ++type)
      if (left_out_[type])
        by_kind[format::def_record_name(static_cast<int>(type))] += left_out_[type];
  }

  std::uint64_t delivered = 0; ///< definitions OTF2 handed over (the others are of unknown kinds)
  unsigned rewritten = 0;
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  std::string error;

private:
  OTF2_GlobalDefWriter* w_;
  const std::map<OTF2_LocationRef, std::uint64_t>& events_written_;
  std::vector<bool> carried_;           ///< by definition type
  std::vector<std::uint64_t> left_out_; ///< by definition type
  bool carry_ = true;
  std::map<OTF2_Paradigm, std::vector<std::uint64_t>> comm_locations_;
};

DefCopy& def_copy(void* u) {
  return static_cast<DefCopy&>(*static_cast<format::DefSink*>(u));
}

OTF2_CallbackCode DefCopy::group(OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                                 OTF2_Paradigm p, OTF2_GroupFlag flags, uint32_t n,
                                 const uint64_t* members) {
  ++delivered;
  if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS) comm_locations_[p].assign(members, members + n);
  if (type != OTF2_GROUP_TYPE_COMM_GROUP || (flags & OTF2_GROUP_FLAG_GLOBAL_MEMBERS))
    return result(OTF2_GlobalDefWriter_WriteGroup(w_, self, name, type, p, flags, n, members));
  // Ranks -> location ids, through this paradigm's COMM_LOCATIONS group.
  auto base = comm_locations_.find(p);
  if (base == comm_locations_.end()) {
    error = "a communicator group precedes its COMM_LOCATIONS group";
    return OTF2_CALLBACK_INTERRUPT;
  }
  std::vector<uint64_t> locations(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (members[i] >= base->second.size()) {
      error = "group " + std::to_string(self) + " names rank " + std::to_string(members[i]) +
              " beyond its COMM_LOCATIONS group";
      return OTF2_CALLBACK_INTERRUPT;
    }
    locations[i] = base->second[members[i]];
  }
  ++rewritten;
  return result(OTF2_GlobalDefWriter_WriteGroup(w_, self, name, OTF2_GROUP_TYPE_COMM_LOCATIONS, p,
                                                flags, n, locations.data()));
}

OTF2_CallbackCode DefCopy::location(OTF2_LocationRef self, OTF2_StringRef name,
                                    OTF2_LocationType type, uint64_t events,
                                    OTF2_LocationGroupRef group) {
  ++delivered;
  auto written = events_written_.find(self);
  if (written != events_written_.end()) events = written->second;
  return result(OTF2_GlobalDefWriter_WriteLocation(w_, self, name, type, events, group));
}

OTF2_CallbackCode copy_group(void* u, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                             OTF2_Paradigm p, OTF2_GroupFlag flags, uint32_t n,
                             const uint64_t* members) {
  return def_copy(u).group(self, name, type, p, flags, n, members);
}
OTF2_CallbackCode copy_location(void* u, OTF2_LocationRef self, OTF2_StringRef name,
                                OTF2_LocationType type, uint64_t events,
                                OTF2_LocationGroupRef group) {
  return def_copy(u).location(self, name, type, events, group);
}

/// Re-encodes one location's events unchanged through OTF2 (generated copy callbacks, every
/// record type), except the records vite_contents.h leaves out.
class EventCopy final : public format::EventSink {
public:
  EventCopy(OTF2_EvtWriter* w, const ViteRecordRule& rule, LeftOutEvents& left_out)
      : w_(w), rule_(rule), left_out_(left_out) {}
  OTF2_TimeStamp begin_record(OTF2_LocationRef, OTF2_TimeStamp t, int type) override {
    carry_ = rule_.carries(type);
    if (!carry_) ++left_out_.by_type[static_cast<std::size_t>(type)];
    return t;
  }
  OTF2_EvtWriter* writer(OTF2_LocationRef) override { return carry_ ? w_ : nullptr; }
  OTF2_CallbackCode end_record(OTF2_ErrorCode r) override {
    if (r != OTF2_SUCCESS && rc == OTF2_SUCCESS) rc = r;
    return r == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
  }
  OTF2_CallbackCode metric(OTF2_AttributeList* a, OTF2_TimeStamp t, OTF2_MetricRef metric,
                           uint8_t n, const OTF2_Type* types, const OTF2_MetricValue* values) {
    if (rule_.is_instance(metric)) {
      ++left_out_.instance_metrics;
      return OTF2_CALLBACK_SUCCESS;
    }
    return end_record(OTF2_EvtWriter_Metric(w_, a, t, metric, n, types, values));
  }
  void unknown() { ++left_out_.unknown; }

  OTF2_ErrorCode rc = OTF2_SUCCESS;

private:
  OTF2_EvtWriter* w_;
  const ViteRecordRule& rule_;
  LeftOutEvents& left_out_;
  bool carry_ = true;
};

EventCopy& event_copy(void* u) {
  return static_cast<EventCopy&>(*static_cast<format::EventSink*>(u));
}
OTF2_CallbackCode copy_metric(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                              OTF2_AttributeList* a, OTF2_MetricRef metric, uint8_t n,
                              const OTF2_Type* types, const OTF2_MetricValue* values) {
  return event_copy(u).metric(a, t, metric, n, types, values);
}
OTF2_CallbackCode drop_unknown(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u,
                               OTF2_AttributeList*) {
  event_copy(u).unknown();
  return OTF2_CALLBACK_SUCCESS;
}

std::string kinds_text(const std::map<std::string, std::uint64_t>& by_kind, const char* what) {
  std::uint64_t total = 0;
  std::string list;
  for (const auto& [kind, n] : by_kind) {
    total += n;
    list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  }
  return std::to_string(total) + " " + what + " (" + list + ")";
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

/// The anchor file's creator, description, machine and every property, as they were.
void copy_anchor_fields(OTF2_Reader* reader, OTF2_Archive* a) {
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
}

/// Where the copy's events come from and go to.
struct EventCopyJob {
  OTF2_Reader* reader;
  OTF2_Archive* archive;
  std::string in_name, out_name; ///< the archives, for messages
  uint64_t chunk_size;
  const ViteRecordRule& rule;
  LeftOutEvents& left_out;
  std::map<OTF2_LocationRef, std::uint64_t>& written; ///< events in the copy, by location
};

/// Copies the event file and local definition file of every location format/ can read
/// (vite_export_events.h) into `out_events`; returns the others, in definition order.
std::vector<const Location*> copy_event_files(EventCopyJob& job,
                                              const format::EventFileLayout& layout,
                                              const std::vector<Location>& locations,
                                              const std::string& out_events) {
  std::vector<std::string> inputs, outputs;
  for (const Location& l : locations) {
    inputs.push_back(format::event_file_path(layout.event_dir, l.id));
    outputs.push_back(format::event_file_path(out_events, l.id));
  }
  std::optional<format::LocalDefinitionReader> def_reader;
  format::LocalDefinitions local;
  std::vector<const Location*> through_otf2;
  format::FilePrefetch prefetch(inputs);
  format::FileCreateAhead create(outputs);
  for (std::size_t i = 0; i < locations.size(); ++i) {
    const Location& l = locations[i];
    const int created = create.take(i);
    std::optional<format::MappedFile> in;
    try {
      in.emplace(prefetch.take(i));
    } catch (const std::runtime_error&) { // (OTF2's reader says what is wrong)
    }
    std::optional<std::uint64_t> kept;
    if (in) {
      // The local definition file goes along unchanged, so it must read as OTF2 reads it: a
      // damaged one is left to OTF2's path, which reports it.
      if (!def_reader) def_reader.emplace(job.reader, layout);
      local = def_reader->read(l.id, l.name, format::Otf2Events::No);
    }
    if (in && local.error.empty()) {
      const LocationMaps maps = [&]() -> const format::IdMaps* {
        // (`retimed` also stands for tables it could not take: then they are not known exactly.)
        return !local.retimed ? &local.maps : nullptr;
      };
      kept =
          copy_vite_events(*in, outputs[i], created, job.chunk_size, job.rule, maps, job.left_out);
    } else if (created >= 0) {
      ::close(created);
    }
    if (!kept) {
      through_otf2.push_back(&l);
      continue;
    }
    job.written[l.id] = *kept;
    // Its mapping tables and clock offsets apply to the copied records as to the original's
    // (the bytes just read, when the reader parsed them itself).
    const std::string def_name = "/" + std::to_string(l.id) + ".def";
    if (!local.file.empty())
      format::write_whole_file(out_events + def_name, local.file);
    else
      format::copy_whole_file(layout.event_dir + def_name, out_events + def_name);
  }
  return through_otf2;
}

/// Re-encodes the events of `locations` through OTF2's reader and writer, with global ids and
/// times (the reader applies each location's mapping tables and clock offsets), and writes them
/// empty local definition files. `event_dir`: the input's directory of event files, if any.
void copy_through_otf2(EventCopyJob& job, const std::vector<const Location*>& locations,
                       const std::string& event_dir) {
  OTF2_Reader* reader = job.reader;
  OTF2_Archive* a = job.archive;
  const std::string& archive = job.in_name;
  const std::string& out = job.out_name;
  if (locations.empty()) return;
  for (const Location* l : locations)
    OTF2_Reader_SelectLocation(reader, l->id);
  const bool have_local_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  check_read(OTF2_Reader_OpenEvtFiles(reader), "'" + archive + "': opening the event files");
  struct CallbacksDeleter {
    OTF2_EvtReaderCallbacks* c;
    ~CallbacksDeleter() { OTF2_EvtReaderCallbacks_Delete(c); }
  } event_callbacks{OTF2_EvtReaderCallbacks_New()};
  format::register_copy_events(event_callbacks.c);
  OTF2_EvtReaderCallbacks_SetMetricCallback(event_callbacks.c, copy_metric);
  OTF2_EvtReaderCallbacks_SetUnknownCallback(event_callbacks.c, drop_unknown);
  for (const Location* l : locations) {
    const std::string where = " of location " + std::to_string(l->id);
    if (have_local_defs)
      if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, l->id)) {
        uint64_t n = 0;
        const OTF2_ErrorCode drc = OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
        OTF2_Reader_CloseDefReader(reader, dr);
        check_read(drc, "'" + archive + "': reading the local definitions" + where);
      }
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, l->id);
    if (!w) throw output_error("'" + out + "': cannot write the events" + where);
    // A location whose empty event file its writer left out gets an empty one in the copy.
    if (!format::empty_event_file_left_out(event_dir, l->id, l->events)) {
      OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, l->id);
      if (!er) throw input_error("'" + archive + "': no event reader" + where);
      EventCopy copy(w, job.rule, job.left_out);
      format::EventSink* sink = &copy; // what the generated copy callbacks expect
      check_read(OTF2_Reader_RegisterEvtCallbacks(reader, er, event_callbacks.c, sink),
                 "'" + archive + "': event callbacks");
      uint64_t n = 0;
      const OTF2_ErrorCode rrc = OTF2_Reader_ReadAllLocalEvents(reader, er, &n);
      OTF2_Reader_CloseEvtReader(reader, er);
      check_write(copy.rc, "'" + out + "': writing the events" + where);
      check_read(rrc, "'" + archive + "': reading the events" + where);
    }
    uint64_t kept = 0;
    check_write(OTF2_EvtWriter_GetNumberOfEvents(w, &kept), "'" + out + "': counting events");
    job.written[l->id] = kept;
    check_write(OTF2_Archive_CloseEvtWriter(a, w), "'" + out + "': writing the events" + where);
  }
  if (have_local_defs) OTF2_Reader_CloseDefFiles(reader);
  OTF2_Reader_CloseEvtFiles(reader);
  check_write(OTF2_Archive_CloseEvtFiles(a), "'" + out + "': closing the event files");
  check_write(OTF2_Archive_OpenDefFiles(a), "'" + out + "': opening the local definition files");
  for (const Location* l : locations) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(a, l->id);
    if (!dw) throw output_error("'" + out + "': cannot write local definitions");
    check_write(OTF2_Archive_CloseDefWriter(a, dw), "'" + out + "': writing local definitions");
  }
  check_write(OTF2_Archive_CloseDefFiles(a), "'" + out + "': closing the local definition files");
}

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
  copy_anchor_fields(reader, a);

  // Events first, so that the location definitions can carry the number of events the copy
  // holds.
  const ArchiveDefs defs = read_definitions(archive);
  const ViteRecordRule rule(read_metric_defs(archive).instances);
  LeftOutEvents left_out;
  std::map<OTF2_LocationRef, std::uint64_t> written;
  EventCopyJob job{reader, a, archive, out, evt_chunk, rule, left_out, written};
  const format::EventFileLayout layout = format::read_event_file_layout(reader, anchor.string());
  std::vector<const Location*> through_otf2;
  if (layout.decodable()) {
    const std::string out_events = (tmp.path / stem).string();
    fs::create_directories(out_events, ec);
    if (ec) throw output_error("'" + out_events + "': cannot create: " + ec.message());
    through_otf2 = copy_event_files(job, layout, defs.locations, out_events);
  } else {
    for (const Location& l : defs.locations)
      through_otf2.push_back(&l);
  }
  copy_through_otf2(job, through_otf2, layout.event_dir);

  OTF2_GlobalDefWriter* dw = OTF2_Archive_GetGlobalDefWriter(a);
  if (!dw) throw output_error("'" + out + "': cannot write definitions");
  DefCopy defs_copy(dw, written);
  format::DefSink* def_sink = &defs_copy; // what the generated copy callbacks expect
  OTF2_GlobalDefReader* dr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!dr) throw input_error("'" + archive + "': no global definitions");
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  format::register_copy_defs(cbs);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, copy_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, copy_location);
  const OTF2_ErrorCode reg = OTF2_Reader_RegisterGlobalDefCallbacks(reader, dr, cbs, def_sink);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  check_read(reg, "'" + archive + "': definition callbacks");
  uint64_t read = 0;
  const OTF2_ErrorCode rrc = OTF2_Reader_ReadAllGlobalDefinitions(reader, dr, &read);
  OTF2_Reader_CloseGlobalDefReader(reader, dr);
  if (!defs_copy.error.empty()) throw input_error("'" + archive + "': " + defs_copy.error);
  check_write(defs_copy.rc, "'" + out + "': writing the definitions");
  check_read(rrc, "'" + archive + "': reading the definitions");
  check_write(OTF2_Archive_CloseGlobalDefWriter(a, dw), "'" + out + "': closing the definitions");
  archive_closer.a = nullptr;
  check_write(OTF2_Archive_Close(a), "'" + out + "': closing the archive");

  fs::rename(tmp.path, out, ec);
  if (ec) throw output_error("'" + out + "': " + ec.message());
  tmp.keep = true;
  ViteCopy result;
  result.rewritten_groups = defs_copy.rewritten;
  for (std::size_t type = 0; type < left_out.by_type.size(); ++type)
    if (left_out.by_type[type])
      result.records_left_out[format::event_record_name(static_cast<int>(type))] =
          left_out.by_type[type];
  if (left_out.instance_metrics)
    result.records_left_out["Metric of metric instances"] = left_out.instance_metrics;
  if (left_out.unknown) result.records_left_out["of unknown kinds"] = left_out.unknown;
  defs_copy.add_left_out(result.definitions_left_out);
  // OTF2 skips definitions of kinds it does not know without a callback.
  if (read > defs_copy.delivered)
    result.definitions_left_out["of unknown kinds"] = read - defs_copy.delivered;
  return result;
}

std::string left_out_summary(const ViteCopy& copy) {
  if (copy.records_left_out.empty() && copy.definitions_left_out.empty()) return "";
  std::string line = "the ViTE copy leaves out ";
  if (!copy.records_left_out.empty()) line += kinds_text(copy.records_left_out, "records");
  if (!copy.records_left_out.empty() && !copy.definitions_left_out.empty()) line += " and ";
  if (!copy.definitions_left_out.empty())
    line += kinds_text(copy.definitions_left_out, "definitions");
  return line + " ViTE 1.2 cannot show (the original keeps them)";
}

} // namespace htrace::report
