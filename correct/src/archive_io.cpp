#include "correct/archive_io.h"

#include "correct/event_file.h"
#include "correct/exchange.h"
#include "correct/record_store.h"
#include "correct/record_tables.h"
#include "htrace/archive_properties.h"

#define OTF2_MPI_UINT64_T MPI_UINT64_T
#define OTF2_MPI_INT64_T MPI_INT64_T
#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <otf2/OTF2_MPI_Collectives.h>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

namespace htrace::correct {

std::string agree(MPI_Comm comm, const std::function<std::string()>& fn) {
  std::string result, error;
  try {
    result = fn();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
  }
  check_together(comm, error);
  return result;
}

std::string find_anchor(const std::string& input) {
  std::error_code ec;
  fs::path p(input);
  if (!fs::exists(p, ec)) throw std::runtime_error("'" + input + "': no such file or directory");
  if (fs::is_directory(p, ec)) {
    std::vector<fs::path> anchors;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.path().extension() == ".otf2" && e.is_regular_file()) anchors.push_back(e.path());
    if (anchors.empty())
      throw std::runtime_error("'" + input + "': not an OTF2 archive (no .otf2 anchor file)");
    if (anchors.size() > 1)
      throw std::runtime_error("'" + input + "': several .otf2 anchor files; name one");
    return anchors[0].string();
  }
  if (p.extension() != ".otf2")
    throw std::runtime_error("'" + input + "': not an OTF2 anchor file (*.otf2)");
  return p.string();
}

namespace {
// OUT as an absolute path without a trailing separator (its parent holds the temporary archive).
fs::path output_path(const Options& o) {
  fs::path out = fs::absolute(fs::path(o.output)).lexically_normal();
  return out.filename().empty() ? out.parent_path() : out;
}
} // namespace

TempOutput prepare_output(const Options& o, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::error_code ec;
  const fs::path out = output_path(o);
  if (fs::exists(out, ec) && !o.force)
    throw std::runtime_error("'" + o.output + "': output exists (use --force to replace it)");
  fs::path in = fs::absolute(fs::path(o.input)).lexically_normal();
  if (fs::is_regular_file(in, ec)) in = in.parent_path();
  if (fs::exists(out, ec) && fs::equivalent(in, out, ec))
    throw std::runtime_error("'" + o.output + "': output is the input archive");
  if (!fs::is_directory(out.parent_path(), ec))
    throw std::runtime_error("'" + o.output + "': parent directory does not exist");
  long pid = rank == 0 ? static_cast<long>(getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
  TempOutput t;
  t.dir = (out.parent_path() /
           ("." + out.filename().string() + ".htrace-correct-" + std::to_string(pid)))
              .string();
  return t;
}

void commit_output(const TempOutput& out, const Options& o, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Barrier(comm);
  if (rank != 0) return;
  const fs::path target = output_path(o);
  std::error_code ec;
  if (fs::exists(target, ec)) {
    // --force: move the old one aside first so a failure never leaves neither.
    fs::path old = target.string() + ".htrace-correct-old";
    fs::rename(target, old, ec);
    if (ec) throw std::runtime_error("'" + o.output + "': cannot replace: " + ec.message());
    fs::remove_all(old, ec);
  }
  fs::rename(out.dir, target, ec);
  if (ec)
    throw std::runtime_error("'" + o.output +
                             "': cannot rename the finished archive: " + ec.message());
}

ArchiveReader::ArchiveReader(const std::string& anchor, MPI_Comm comm) {
  reader_ = OTF2_Reader_Open(anchor.c_str());
  int ok = reader_ ? 1 : 0, all = ok, size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all) {
    if (reader_) OTF2_Reader_Close(reader_), reader_ = nullptr;
    throw std::runtime_error("'" + anchor + "': cannot open as an OTF2 archive");
  }
  if (size > 1)
    OTF2_MPI_Reader_SetCollectiveCallbacks(reader_, comm);
  else
    OTF2_Reader_SetSerialCollectiveCallbacks(reader_);
  OTF2_Reader_GetChunkSize(reader_, &event_chunk_, &def_chunk_);
  // The POSIX substrate keeps <location>.evt files in the directory named like the anchor file.
  OTF2_FileSubstrate substrate = OTF2_SUBSTRATE_UNDEFINED;
  OTF2_Compression compression = OTF2_COMPRESSION_UNDEFINED;
  OTF2_Reader_GetFileSubstrate(reader_, &substrate);
  OTF2_Reader_GetCompression(reader_, &compression);
  if (substrate == OTF2_SUBSTRATE_POSIX && compression == OTF2_COMPRESSION_NONE)
    event_dir_ = fs::path(anchor).replace_extension().string();
  uint8_t major = 0, minor = 0, bugfix = 0;
  OTF2_Reader_GetVersion(reader_, &major, &minor, &bugfix);
  known_format_ =
      major < OTF2_VERSION_MAJOR || (major == OTF2_VERSION_MAJOR && minor <= OTF2_VERSION_MINOR);
}

namespace {
// Local definitions that change what OTF2's reader passes for a location's events.
OTF2_CallbackCode note_mapping_table(void* u, OTF2_MappingType, const OTF2_IdMap*) {
  *static_cast<bool*>(u) = true;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode note_clock_offset(void* u, OTF2_TimeStamp, int64_t, double) {
  *static_cast<bool*>(u) = true;
  return OTF2_CALLBACK_SUCCESS;
}
} // namespace

bool ArchiveReader::decodable(OTF2_LocationRef location) const {
  return !event_dir_.empty() && known_format_ && rewritten_by_definitions_.count(location) == 0;
}

ArchiveReader::~ArchiveReader() {
  if (!reader_) return;
  if (evt_open_) OTF2_Reader_CloseEvtFiles(reader_);
  OTF2_Reader_Close(reader_);
}

void ArchiveReader::open_locations(const Definitions& defs,
                                   const std::vector<uint32_t>& processes) {
  for (uint32_t p : processes)
    for (uint32_t li : defs.processes[p].locations)
      OTF2_Reader_SelectLocation(reader_, defs.locations[li].id);
  // Local definitions carry the mapping tables and clock offsets the reader applies to events.
  bool defs_open = OTF2_Reader_OpenDefFiles(reader_) == OTF2_SUCCESS;
  OTF2_Reader_OpenEvtFiles(reader_);
  evt_open_ = true;
  const std::unique_ptr<OTF2_DefReaderCallbacks, void (*)(OTF2_DefReaderCallbacks*)> cbs(
      OTF2_DefReaderCallbacks_New(), OTF2_DefReaderCallbacks_Delete);
  OTF2_DefReaderCallbacks_SetMappingTableCallback(cbs.get(), note_mapping_table);
  OTF2_DefReaderCallbacks_SetClockOffsetCallback(cbs.get(), note_clock_offset);
  for (uint32_t p : processes)
    for (uint32_t li : defs.processes[p].locations) {
      const OTF2_LocationRef id = defs.locations[li].id;
      if (!defs_open) {
        rewritten_by_definitions_.insert(id); // unknown: leave the location to OTF2's reader
        continue;
      }
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader_, id);
      if (!dr) continue;
      bool rewritten = false;
      OTF2_Reader_RegisterDefCallbacks(reader_, dr, cbs.get(), &rewritten);
      uint64_t n = 0;
      OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(reader_, dr, &n);
      OTF2_Reader_CloseDefReader(reader_, dr);
      if (rc != OTF2_SUCCESS)
        throw std::runtime_error("location " + std::to_string(id) + ": corrupt definition file");
      if (rewritten) rewritten_by_definitions_.insert(id);
    }
  if (defs_open) OTF2_Reader_CloseDefFiles(reader_);
}

void ArchiveReader::close_events() {
  if (evt_open_) OTF2_Reader_CloseEvtFiles(reader_);
  evt_open_ = false;
}

namespace {
OTF2_FlushType flush_always(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp no_flush_time(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
} // namespace

const OTF2_FlushCallbacks kFlushAlways = {flush_always, no_flush_time};

namespace {

class DefCopy final : public DefSink {
public:
  DefCopy(OTF2_GlobalDefWriter* w, uint64_t last_time)
      : w_(w), last_(last_time), counts(def_record_type_count()) {}
  OTF2_GlobalDefWriter* writer() override { return w_; }
  void count(int type) override { counts[static_cast<size_t>(type)]++; }
  OTF2_CallbackCode result(OTF2_ErrorCode rc) override {
    if (rc != OTF2_SUCCESS) error = rc;
    return rc == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
  }
  // Events only move later: the offset stays valid, the length grows to cover the last event.
  void adjust_clock_properties(uint64_t*, uint64_t* offset, uint64_t* length, uint64_t*) override {
    if (last_ >= *offset && last_ - *offset + 1 > *length) *length = last_ - *offset + 1;
  }
  std::vector<uint64_t> counts;
  uint64_t unknown = 0;
  OTF2_ErrorCode error = OTF2_SUCCESS;

private:
  OTF2_GlobalDefWriter* w_;
  uint64_t last_;
};

OTF2_CallbackCode count_unknown_def(void* u) {
  static_cast<DefCopy*>(u)->unknown++;
  return OTF2_CALLBACK_SUCCESS;
}

// One location's stored records with the timestamps `times` produces, a chunk at a time; returns
// the last timestamp (0 for no events).
int64_t write_stored_location(const RecordStore& records, TimeSource& times, OTF2_EvtWriter* w,
                              uint64_t* counts) {
  StoredEventWriter out(records, w, counts);
  std::array<int64_t, TimeSource::kChunk> chunk, input;
  int64_t last = 0;
  for (size_t n; (n = times.next(chunk.data(), input.data(), chunk.size())) > 0;) {
    if (out.write(chunk.data(), n) != OTF2_SUCCESS) return -1;
    last = chunk[n - 1];
  }
  return out.remaining() == 0 ? last : -1;
}

// The local definition file of a copied event file: its mapping tables translate the copied
// records' ids. Returns false if the input has none.
bool copy_local_definitions(const std::string& event_dir, const std::string& out_dir,
                            OTF2_LocationRef id) {
  const std::string name = std::to_string(id) + ".def";
  std::error_code ec;
  if (!fs::exists(fs::path(event_dir) / name, ec)) return false;
  fs::copy_file(fs::path(event_dir) / name, fs::path(out_dir) / name,
                fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw std::runtime_error("location " + std::to_string(id) +
                             ": cannot copy its definition file: " + ec.message());
  return true;
}

} // namespace

void write_corrected(ArchiveReader& reader, const Definitions& defs,
                     const std::map<std::string, std::string>& properties, const LocalModel& model,
                     TimeSource& times, const TempOutput& out, MPI_Comm comm, Report& report) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  OTF2_Archive* archive = agree_value(comm, [&] {
    OTF2_Archive* a = OTF2_Archive_Open(out.dir.c_str(), out.name.c_str(), OTF2_FILEMODE_WRITE,
                                        reader.event_chunk_size(), reader.def_chunk_size(),
                                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!a) throw std::runtime_error("'" + out.dir + "': cannot create the output archive");
    return a;
  });
  OTF2_Archive_SetFlushCallbacks(archive, &kFlushAlways, nullptr);
  if (size > 1)
    OTF2_MPI_Archive_SetCollectiveCallbacks(archive, comm, MPI_COMM_NULL);
  else
    OTF2_Archive_SetSerialCollectiveCallbacks(archive);
  for (const auto& [name, value] : properties)
    OTF2_Archive_SetProperty(archive, name.c_str(), value.c_str(), true);
  OTF2_Archive_SetCreator(archive, "htrace-correct");

  // The records were counted by type while reading; the writer's own count is not needed.
  std::vector<uint64_t> written(static_cast<size_t>(event_record_type_count()));
  std::vector<char> copied(model.locations.size()); // event file copied record by record
  int64_t last = 0; // the latest corrected timestamp, for the clock properties
  const std::string out_events = (fs::path(out.dir) / out.name).string();
  // OTF2 opens and closes event and definition files collectively: every rank reaches those
  // calls, and a failure in between is thrown after them, on every rank (agree).
  agree(comm, [&] {
    std::string failed;
    const auto attempt = [&](auto&& step) {
      if (!failed.empty()) return;
      try {
        step();
      } catch (const std::exception& e) {
        failed = e.what();
      }
    };
    attempt([&] {
      std::error_code ec;
      fs::create_directories(out_events, ec);
      if (ec) throw std::runtime_error("'" + out_events + "': cannot create: " + ec.message());
    });
    OTF2_Archive_OpenEvtFiles(archive);
    for (size_t i = 0; i < model.locations.size(); ++i)
      attempt([&] {
        const LocationModel& loc = model.locations[i];
        const LocationInfo& info = defs.locations[loc.location];
        times.begin(i);
        std::optional<int64_t> loc_last;
        if (loc.copy_file) {
          loc_last = rewrite_event_file(event_file_path(reader.event_dir(), info.id),
                                        event_file_path(out_events, info.id),
                                        reader.event_chunk_size(), times, loc.type_counts);
          copied[i] = loc_last.has_value();
        }
        if (!loc_last) {
          // A copy that turned out impossible is written from the records, read again for it.
          RecordStore reread;
          if (loc.copy_file) {
            read_records(reader.get(), info, loc.input.size(), reread);
            times.begin(i);
          }
          OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, info.id);
          loc_last =
              write_stored_location(loc.copy_file ? reread : loc.records, times, w, written.data());
          OTF2_Archive_CloseEvtWriter(archive, w);
        }
        if (*loc_last < 0)
          throw std::runtime_error("location " + std::to_string(info.id) +
                                   ": writing events failed");
        last = std::max(last, *loc_last);
      });
    OTF2_Archive_CloseEvtFiles(archive);
    // Every location gets a local definition file: records written through the library carry
    // global ids (an empty file), copied ones keep the input's file with its mapping tables.
    OTF2_Archive_OpenDefFiles(archive);
    for (size_t i = 0; i < model.locations.size(); ++i)
      attempt([&] {
        const OTF2_LocationRef id = defs.locations[model.locations[i].location].id;
        if (!copied[i] || !copy_local_definitions(reader.event_dir(), out_events, id))
          OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, id));
      });
    OTF2_Archive_CloseDefFiles(archive);
    if (!failed.empty()) throw std::runtime_error(failed);
    return std::string();
  });

  MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT64_T, MPI_MAX, comm);
  std::vector<uint64_t> def_counts(static_cast<size_t>(def_record_type_count()));
  uint64_t def_unknown = 0;
  agree(comm, [&] {
    if (rank != 0) return std::string();
    OTF2_GlobalDefWriter* gw = OTF2_Archive_GetGlobalDefWriter(archive);
    OTF2_GlobalDefReader* gr = OTF2_Reader_GetGlobalDefReader(reader.get());
    DefCopy copy(gw, static_cast<uint64_t>(last));
    OTF2_GlobalDefReaderCallbacks* dcbs = OTF2_GlobalDefReaderCallbacks_New();
    register_copy_defs(dcbs);
    OTF2_GlobalDefReaderCallbacks_SetUnknownCallback(dcbs, count_unknown_def);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader.get(), gr, dcbs, &copy);
    OTF2_GlobalDefReaderCallbacks_Delete(dcbs);
    uint64_t n = 0;
    OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader.get(), gr, &n);
    OTF2_Reader_CloseGlobalDefReader(reader.get(), gr);
    if (rc != OTF2_SUCCESS || copy.error != OTF2_SUCCESS)
      throw std::runtime_error("copying the definitions failed");
    def_counts = copy.counts;
    def_unknown = copy.unknown;
    return std::string();
  });
  OTF2_Archive_Close(archive);

  std::vector<uint64_t> counts = model.event_counts;
  MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM,
                comm);
  uint64_t unknown = model.unknown_events;
  uint64_t copied_files = static_cast<uint64_t>(std::count(copied.begin(), copied.end(), 1));
  MPI_Allreduce(MPI_IN_PLACE, &unknown, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &copied_files, 1, MPI_UINT64_T, MPI_SUM, comm);
  report.copied_event_files = copied_files;
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i]) report.event_records[event_record_name(static_cast<int>(i))] = counts[i];
  for (size_t i = 0; i < def_counts.size(); ++i)
    if (def_counts[i])
      report.definition_records[def_record_name(static_cast<int>(i))] = def_counts[i];
  report.unknown_events = unknown;
  report.unknown_definitions = def_unknown;
}

} // namespace htrace::correct
