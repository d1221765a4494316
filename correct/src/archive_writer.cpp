#include "correct/archive_writer.h"

#include "correct/event_file_rewrite.h"
#include "correct/exchange.h"
#include "correct/record_store.h"
#include "format/event_file.h"
#include "format/file_copy.h"
#include "format/file_prefetch.h"
#include "format/otf2_library.h"
#include "format/record_tables.h"
#include "otf2_mpi_collectives.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace htrace::correct {

namespace {

class DefCopy final : public format::DefSink {
public:
  DefCopy(OTF2_GlobalDefWriter* w, uint64_t last_time)
      : counts(format::def_record_type_count()), w_(w), last_(last_time) {}
  OTF2_GlobalDefWriter* writer() override { return w_; }
  void count(int type) override { counts[static_cast<size_t>(type)]++; }
  OTF2_CallbackCode result(OTF2_ErrorCode rc) override {
    if (rc != OTF2_SUCCESS) error = rc;
    return rc == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
  }
  // Events only move later: the offset stays valid, the length grows to cover the last event
  // (offset + length is the last event's time, as libhtrace and htrace-salvage write it, so an
  // archive that needs no correction keeps its length).
  void adjust_clock_properties(uint64_t*, uint64_t* offset, uint64_t* length, uint64_t*) override {
    if (last_ >= *offset && last_ - *offset > *length) *length = last_ - *offset;
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
// the last timestamp (0 for no events). `where` names the output file in errors.
int64_t write_stored_location(const RecordStore& records, TimeSource& times, OTF2_EvtWriter* w,
                              uint64_t* counts, const std::string& where) {
  StoredEventWriter out(records, w, counts);
  std::array<int64_t, TimeSource::kChunk> chunk, input;
  int64_t last = 0;
  for (size_t n; (n = times.next(chunk.data(), input.data(), chunk.size())) > 0;) {
    const OTF2_ErrorCode rc = out.write(chunk.data(), n);
    if (rc != OTF2_SUCCESS)
      throw output_error(where + ": cannot write (" + format::otf2_cause(rc) + ")");
    last = chunk[n - 1];
  }
  if (out.remaining() != 0) throw internal_error(where + ": fewer timestamps than stored records");
  return last;
}

// The local definition file of a copied event file: its mapping tables translate the copied
// records' ids. Written from the bytes the reader kept, else copied. Returns false if the input
// has none.
bool copy_local_definitions(const ArchiveReader& reader, const std::string& out_dir,
                            OTF2_LocationRef id, uint32_t location_index) {
  const std::string name = "/" + std::to_string(id) + ".def";
  if (const auto bytes = reader.local_definition_file(location_index)) {
    format::write_whole_file(out_dir + name, *bytes);
    return true;
  }
  return format::copy_whole_file(reader.event_dir() + name, out_dir + name);
}

// A location's local definition file copied from the input (for a copied event file), or why not.
struct DefinitionCopy {
  bool copied = false;
  std::string failure;
  ErrorKind kind = ErrorKind::Output;
};

// The output archive: closed (collectively) when destroyed if write_corrected did not get to
// close it, after a failure that is being reported already.
class OutputArchive {
public:
  OutputArchive(const TempOutput& out, const ArchiveReader& reader, RankGroup& comm)
      : comm_(comm), collectives_(otf2_collectives(comm)) {
    archive_ = OTF2_Archive_Open(out.dir().c_str(), out.name().c_str(), OTF2_FILEMODE_WRITE,
                                 reader.event_chunk_size(), reader.def_chunk_size(),
                                 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    check_together(comm, archive_ ? "" : "'" + out.dir() + "': cannot create the output archive", 0,
                   ErrorKind::Output);
    // OTF2 creates the archive's directories here (rank 0, result broadcast).
    const OTF2_ErrorCode rc = collectives_ ? collectives_->attach(archive_)
                                           : OTF2_Archive_SetSerialCollectiveCallbacks(archive_);
    check_together(comm,
                   rc == OTF2_SUCCESS ? ""
                                      : "'" + out.dir() + "': cannot create the output archive (" +
                                            format::otf2_cause(rc) + ")",
                   0, ErrorKind::Output);
  }
  ~OutputArchive() {
    if (archive_ && may_clean_up_together()) OTF2_Archive_Close(archive_);
  }
  OutputArchive(const OutputArchive&) = delete;
  OutputArchive& operator=(const OutputArchive&) = delete;
  OTF2_Archive* get() const { return archive_; }
  // Collective: writes what is left (the anchor file) and closes every file.
  void close(const std::string& where) {
    // OTF2_Archive_Close returns success when writing the anchor file fails (seen on a full
    // disk: an empty traces.otf2): any diagnostic OTF2 gives while closing counts as failure.
    format::forget_otf2_diagnostics();
    OTF2_ErrorCode rc = OTF2_Archive_Close(std::exchange(archive_, nullptr));
    if (rc == OTF2_SUCCESS && format::otf2_diagnostics_pending())
      rc = OTF2_ERROR_PROCESSED_WITH_FAULTS;
    check_together(comm_,
                   rc == OTF2_SUCCESS ? ""
                                      : where +
                                            ": cannot write the global definitions or the "
                                            "anchor file (" +
                                            format::otf2_cause(rc) + ")",
                   0, ErrorKind::Output);
  }

private:
  RankGroup& comm_;
  std::unique_ptr<Otf2Collectives> collectives_; // outlives archive_ (closed in the destructor)
  OTF2_Archive* archive_ = nullptr;
};

// The first failure among steps every rank must go through: OTF2 opens and closes event and
// definition files collectively, so a failure in between skips the remaining steps and is thrown
// only after the last collective call. Failures are output errors unless they name another kind
// (a damaged input found only now).
class FirstFailure {
public:
  template <class Step> void attempt(Step&& step) {
    if (!what_.empty()) return;
    try {
      step();
    } catch (const std::exception& e) {
      what_ = e.what();
      kind_ = error_kind(e, ErrorKind::Output);
    }
  }
  void check(OTF2_ErrorCode rc, const std::string& what) {
    if (rc != OTF2_SUCCESS && what_.empty())
      what_ = what + " (" + format::otf2_cause(rc) + ")", kind_ = ErrorKind::Output;
  }
  void throw_if_failed() const {
    if (!what_.empty()) throw Error(kind_, what_);
  }

private:
  std::string what_;
  ErrorKind kind_ = ErrorKind::Output;
};

// write_corrected's steps, in order; each is collective and agreed.
class CorrectedArchiveWriter {
public:
  CorrectedArchiveWriter(ArchiveReader& reader, const Definitions& defs, const LocalModel& model,
                         TimeSource& times, const TempOutput& out, RankGroup& comm)
      : reader_(reader), defs_(defs), model_(model), times_(times), out_(out), comm_(comm),
        output_(out, reader, comm), out_events_((fs::path(out.dir()) / out.name()).string()),
        written_(static_cast<size_t>(format::event_record_type_count())),
        copied_(model.locations.size()),
        def_counts_(static_cast<size_t>(format::def_record_type_count())), rank_(comm.rank()) {}

  void set_up(const std::map<std::string, std::string>& properties) {
    const std::string anchor = (fs::path(out_.dir()) / (out_.name() + ".otf2")).string();
    OTF2_Archive* archive = output_.get();
    agree(
        comm_,
        [&] {
          const auto check = [&](OTF2_ErrorCode rc, const char* what) {
            if (rc != OTF2_SUCCESS)
              throw output_error("'" + anchor + "': " + what + " (" + format::otf2_cause(rc) + ")");
          };
          check(OTF2_Archive_SetFlushCallbacks(archive, &format::kFlushAlways, nullptr),
                "cannot set up the output");
          for (const auto& [name, value] : properties)
            check(OTF2_Archive_SetProperty(archive, name.c_str(), value.c_str(), true),
                  "cannot set a property");
          check(OTF2_Archive_SetCreator(archive, "htrace-correct"), "cannot set the creator");
          return std::string();
        },
        ErrorKind::Output);
  }

  // Every owned location's event file, then its local definition file.
  void write_locations() {
    OTF2_Archive* archive = output_.get();
    agree(
        comm_,
        [&] {
          FirstFailure failure;
          failure.attempt([&] {
            std::error_code ec;
            fs::create_directories(out_events_, ec);
            if (ec) throw output_error("'" + out_events_ + "': cannot create: " + ec.message());
          });
          failure.check(OTF2_Archive_OpenEvtFiles(archive),
                        "'" + out_events_ + "': cannot open event files");
          // The local definition files are copied on a thread of their own while the event
          // files are rewritten: two file creations per location, which one after the other took
          // half of the writing's time at 16,384 locations.
          const size_t n = model_.locations.size();
          format::Ahead<DefinitionCopy> def_copies(n, n,
                                                   [&](size_t i) { return copy_definitions(i); });
          {
            format::FilePrefetch inputs(copied_event_files(reader_.event_dir()));
            format::FileCreateAhead outputs(copied_event_files(out_events_));
            for (size_t i = 0; i < model_.locations.size(); ++i)
              failure.attempt([&] { write_events(i, inputs, outputs); });
          }

          failure.check(OTF2_Archive_CloseEvtFiles(archive),
                        "'" + out_events_ + "': cannot write event files");
          failure.check(OTF2_Archive_OpenDefFiles(archive),
                        "'" + out_events_ + "': cannot open local definition files");
          for (size_t i = 0; i < n; ++i)
            failure.attempt([&] { write_local_definitions(i, def_copies.take(i)); });
          failure.check(OTF2_Archive_CloseDefFiles(archive),
                        "'" + out_events_ + "': cannot write local definition files");
          failure.throw_if_failed();
          return std::string();
        },
        ErrorKind::Output);
    comm_.allreduce_max(&last_, 1);
  }

  // Rank 0 copies the input's global definitions, the clock properties covering the last
  // corrected event; then every rank closes the archive (which writes the anchor file).
  void write_global_definitions() {
    agree(
        comm_,
        [&] {
          if (rank_ == 0) copy_global_definitions();
          return std::string();
        },
        ErrorKind::Output);
    output_.close("'" + out_.dir() + "'");
  }

  void summarize(Report& report) const {
    std::vector<uint64_t> counts = model_.event_counts;
    comm_.allreduce_sum(counts.data(), counts.size());
    uint64_t unknown = model_.unknown_events;
    uint64_t copied_files = static_cast<uint64_t>(std::count(copied_.begin(), copied_.end(), 1));
    comm_.allreduce_sum(&unknown, 1);
    comm_.allreduce_sum(&copied_files, 1);
    report.copied_event_files = copied_files;
    for (size_t i = 0; i < counts.size(); ++i)
      if (counts[i])
        report.event_records[format::event_record_name(static_cast<int>(i))] = counts[i];
    for (size_t i = 0; i < def_counts_.size(); ++i)
      if (def_counts_[i])
        report.definition_records[format::def_record_name(static_cast<int>(i))] = def_counts_[i];
    report.unknown_events = unknown;
    report.unknown_definitions = def_unknown_;
  }

private:
  // Location i's event file: its input file copied record by record with new timestamps where
  // the model allows, else (or when the copy turns out impossible) its records written through
  // OTF2.
  // The event file in `dir` of each location that is copied ("" for the others), by location.
  std::vector<std::string> copied_event_files(const std::string& dir) const {
    std::vector<std::string> paths;
    for (const LocationModel& loc : model_.locations)
      paths.push_back(loc.copy_file ? format::event_file_path(dir, defs_.locations[loc.location].id)
                                    : "");
    return paths;
  }

  void write_events(size_t i, format::FilePrefetch& inputs, format::FileCreateAhead& outputs) {
    const LocationModel& loc = model_.locations[i];
    const LocationInfo& info = defs_.locations[loc.location];
    const std::string out_file = format::event_file_path(out_events_, info.id);
    times_.begin(i);
    std::optional<int64_t> loc_last;
    if (loc.copy_file) {
      const format::MappedFile input = inputs.take(i);
      loc_last = rewrite_event_file(input, out_file, reader_.event_chunk_size(), times_,
                                    loc.type_counts, outputs.take(i));
      copied_[i] = loc_last.has_value();
    }
    if (!loc_last) {
      // A copy that turned out impossible is written from the records, read again for it.
      RecordStore reread;
      if (loc.copy_file) {
        read_records(reader_.get(), info, loc.input.size(), reread);
        times_.begin(i);
      }
      loc_last =
          write_through_otf2(info.id, loc.copy_file ? reread : loc.records, "'" + out_file + "'");
    }
    last_ = std::max(last_, *loc_last);
  }

  int64_t write_through_otf2(OTF2_LocationRef id, const RecordStore& records,
                             const std::string& file) {
    OTF2_Archive* archive = output_.get();
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, id);
    if (!w) throw output_error(file + ": cannot create");
    // The writer is closed (its last buffer flushed) even if writing failed.
    int64_t last = 0;
    try {
      last = write_stored_location(records, times_, w, written_.data(), file);
    } catch (...) {
      OTF2_Archive_CloseEvtWriter(archive, w);
      throw;
    }
    const OTF2_ErrorCode rc = OTF2_Archive_CloseEvtWriter(archive, w);
    if (rc != OTF2_SUCCESS)
      throw output_error(file + ": cannot write (" + format::otf2_cause(rc) + ")");
    return last;
  }

  // Every location gets a local definition file: records written through the library carry
  // global ids (an empty file), copied ones keep the input's file with its mapping tables.
  // The input's local definition file of a location whose event file is to be copied (on the
  // copying thread: it must not throw).
  DefinitionCopy copy_definitions(size_t i) const {
    DefinitionCopy c;
    if (!model_.locations[i].copy_file) return c;
    try {
      const uint32_t li = model_.locations[i].location;
      c.copied = copy_local_definitions(reader_, out_events_, defs_.locations[li].id, li);
    } catch (const std::exception& e) {
      c.failure = e.what(), c.kind = error_kind(e, ErrorKind::Output);
    }
    return c;
  }

  // `copy`: the input's file as copied already, for a location whose event file was to be copied.
  void write_local_definitions(size_t i, const DefinitionCopy& copy) {
    if (!copy.failure.empty()) throw Error(copy.kind, copy.failure);
    const bool copied = copy.copied;
    const OTF2_LocationRef id = defs_.locations[model_.locations[i].location].id;
    if (copied_[i] && copied) return;
    const std::string path = (fs::path(out_events_) / (std::to_string(id) + ".def")).string();
    // The event file's copy failed after all: its records carry global ids now.
    if (copied && ::unlink(path.c_str()) != 0)
      throw output_error("'" + path + "': cannot remove: " + std::strerror(errno));
    const std::string file = "'" + path + "'";
    OTF2_Archive* archive = output_.get();
    OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(archive, id);
    if (!w) throw output_error(file + ": cannot create");
    const OTF2_ErrorCode rc = OTF2_Archive_CloseDefWriter(archive, w);
    if (rc != OTF2_SUCCESS)
      throw output_error(file + ": cannot write (" + format::otf2_cause(rc) + ")");
  }

  void copy_global_definitions() {
    const std::string out_defs = (fs::path(out_.dir()) / (out_.name() + ".def")).string();
    OTF2_Archive* archive = output_.get();
    OTF2_GlobalDefWriter* gw = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!gw) throw output_error("'" + out_defs + "': cannot create");
    OTF2_GlobalDefReader* gr = OTF2_Reader_GetGlobalDefReader(reader_.get());
    if (!gr) throw input_error("cannot open the global definitions");
    DefCopy copy(gw, static_cast<uint64_t>(last_));
    OTF2_GlobalDefReaderCallbacks* callbacks = OTF2_GlobalDefReaderCallbacks_New();
    format::register_copy_defs(callbacks);
    OTF2_GlobalDefReaderCallbacks_SetUnknownCallback(callbacks, count_unknown_def);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader_.get(), gr, callbacks, &copy);
    OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
    uint64_t n = 0;
    const OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader_.get(), gr, &n);
    OTF2_Reader_CloseGlobalDefReader(reader_.get(), gr);
    // Flushes the global definitions: a write error shows here, not in Archive_Close.
    const OTF2_ErrorCode closed = OTF2_Archive_CloseGlobalDefWriter(archive, gw);
    if (copy.error == OTF2_SUCCESS) copy.error = closed;
    if (copy.error != OTF2_SUCCESS)
      throw output_error("'" + out_defs + "': cannot write (" + format::otf2_cause(copy.error) +
                         ")");
    if (rc != OTF2_SUCCESS)
      throw input_error("corrupt global definitions (" + format::otf2_cause(rc) + ")");
    def_counts_ = copy.counts;
    def_unknown_ = copy.unknown;
  }

  ArchiveReader& reader_;
  const Definitions& defs_;
  const LocalModel& model_;
  TimeSource& times_;
  const TempOutput& out_;
  RankGroup& comm_;
  OutputArchive output_;
  const std::string out_events_;
  // The records were counted by type while reading; the writer's own count is not needed.
  std::vector<uint64_t> written_;
  std::vector<char> copied_; // event file copied record by record
  int64_t last_ = 0;         // the latest corrected timestamp, for the clock properties
  std::vector<uint64_t> def_counts_;
  uint64_t def_unknown_ = 0;
  int rank_ = 0;
};

} // namespace

void write_corrected(ArchiveReader& reader, const Definitions& defs,
                     const std::map<std::string, std::string>& properties, const LocalModel& model,
                     TimeSource& times, const TempOutput& out, RankGroup& comm, Report& report) {
  CorrectedArchiveWriter writer(reader, defs, model, times, out, comm);
  writer.set_up(properties);
  writer.write_locations();
  writer.write_global_definitions();
  writer.summarize(report);
}

} // namespace htrace::correct
