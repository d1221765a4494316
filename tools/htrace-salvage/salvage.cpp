// How a failed run becomes an archive:
//  1. Each rank's salvage files give its definitions and how it ended; unify() (the same function
//     MPI_Finalize uses) turns them into global definitions and per-rank id translations.
//  2. A scratch archive beside OUT holds those definitions and links to IN's event files, so that
//     OTF2's own reader decodes the events (with the rank's local ids: no mapping tables there).
//  3. Every event is copied into OUT. A location of a rank that did not finish gets, at its last
//     recorded time, a zero-length region naming the cause and a Leave for each region still open:
//     visibly cut off, nothing padded. An event file that ends inside a record (the process died
//     while OTF2 wrote it) is copied up to its last whole record.
//  4. OUT gets what MPI_Finalize would have written: the ranks' mapping tables (local ids to
//     global ones), the global definitions (with the true event counts) and the properties; the
//     finished archive is renamed into place. IN is only read.
#include "salvage.h"

#include "chunk_pool.h"
#include "event_copy.h"
#include "event_file_scan.h"
#include "format/otf2_library.h"
#include "format/output_path.h"
#include "rank_inputs.h"
#include "record/global_defs.h"
#include "record/snapshot.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <htrace/archive_properties.h>
#include <htrace/version.h>
#include <map>
#include <memory>
#include <otf2/otf2.h>
#include <sstream>
#include <unistd.h>
#include <utility>

namespace fs = std::filesystem;

namespace htrace::salvage {
namespace {

using record::RankDefs;
namespace snapshot = record::snapshot;

/// The cause without its detail ("write failure: ..." -> "write failure").
std::string short_cause(const std::string& end) {
  const auto colon = end.find(':');
  return colon == std::string::npos ? end : end.substr(0, colon);
}

std::string otf2_failure(const std::string& what, OTF2_ErrorCode rc) {
  return what + ": " + format::otf2_cause(rc);
}

using format::ArchivePtr;
using format::ReaderPtr;

ArchivePtr open_for_writing(const fs::path& dir, std::uint64_t event_chunk) {
  ArchivePtr a(OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, event_chunk, 4 << 20,
                                 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!a) throw output_error("'" + dir.string() + "': cannot create an OTF2 archive");
  OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(a.get(), &format::kFlushAlways, nullptr);
  if (rc == OTF2_SUCCESS) rc = bound_event_buffers(a.get());
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetSerialCollectiveCallbacks(a.get());
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetCreator(a.get(), "htrace-salvage");
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetDescription(a.get(), "libhtrace trace of a run that did not finish, "
                                              "rebuilt by htrace-salvage");
  if (rc != OTF2_SUCCESS) throw output_error(otf2_failure("'" + dir.string() + "'", rc));
  return a;
}

/// Windows, groups, files and MPI-IO handles of every rank, unified as finalize() does: windows
/// and handles are identified by their communicators, so these are first made global.
record::RmaIoGlobal unify_rma_io(const std::vector<RankInput>& ranks,
                                 const record::Unified& unified,
                                 std::vector<record::RmaIoMaps>& maps) {
  std::vector<record::RmaIoPart> parts;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::vector<std::uint32_t>& comms = unified.maps[r].comms;
    auto global = [&](record::CommId c) { return c < comms.size() ? comms[c] : c; };
    record::RmaIoPart part = ranks[r].snap.rma_io;
    for (auto& w : part.windows)
      w.comm = global(w.comm);
    for (auto& h : part.handles)
      h.comm = global(h.comm);
    parts.push_back(std::move(part));
  }
  return record::unify_rma_io(parts, static_cast<std::uint32_t>(unified.groups.size()), maps);
}

/// Every rank's mapping tables, one local definition file per location. Returns "" or why.
std::string write_mappings(OTF2_Archive* a, const std::vector<RankDefs>& all,
                           const record::Unified& unified,
                           const std::vector<record::RmaIoMaps>& rma_io_maps) {
  OTF2_ErrorCode rc = OTF2_Archive_OpenDefFiles(a);
  if (rc != OTF2_SUCCESS) return otf2_failure("opening definition files", rc);
  std::string error;
  for (std::size_t r = 0; error.empty() && r < all.size(); ++r)
    error = record::write_local_definitions(reinterpret_cast<OTF2_Archive_struct*>(a), all[r],
                                            unified.maps[r], &rma_io_maps[r]);
  rc = OTF2_Archive_CloseDefFiles(a);
  if (error.empty() && rc != OTF2_SUCCESS) error = otf2_failure("closing definition files", rc);
  return error;
}

/// The scratch archive: global definitions and IN's event files linked in.
void write_scratch(const fs::path& dir, const fs::path& in_events, std::vector<RankDefs>& all,
                   const record::Unified& unified, std::uint64_t event_chunk) {
  {
    // The tracer's chunk size: OTF2 finds records by chunk, so reading needs the writer's.
    ArchivePtr a = open_for_writing(dir, event_chunk);
    std::string error = record::write_global_definitions(
        reinterpret_cast<OTF2_Archive_struct*>(a.get()), all, unified, record::ClockInfo{});
    const OTF2_ErrorCode rc = OTF2_Archive_Close(a.release());
    if (error.empty() && rc != OTF2_SUCCESS) error = otf2_failure("closing", rc);
    if (!error.empty()) throw output_error("'" + dir.string() + "': " + error);
    fs::create_directory(dir / "traces");
  }
  for (const auto& d : all)
    for (const auto& loc : d.locations) {
      const fs::path source = in_events / (std::to_string(loc.id) + ".evt");
      std::error_code ec;
      if (!fs::is_regular_file(source, ec)) continue;
      fs::create_symlink(fs::absolute(source), dir / "traces" / source.filename(), ec);
      if (ec)
        throw output_error("'" + dir.string() + "': cannot link the event files: " + ec.message());
    }
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks)
    s += (s.empty() ? "" : " ") + std::to_string(r);
  return s;
}

/// A temporary directory next to OUT, removed unless committed.
class TempDir {
public:
  explicit TempDir(fs::path path) : path_(std::move(path)) {}
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  void commit(const fs::path& target, const std::string& shown) {
    if (::rename(path_.c_str(), target.c_str()) != 0)
      throw output_error("'" + shown + "': cannot rename the finished archive into place: " +
                         std::strerror(errno));
    path_.clear();
  }

private:
  fs::path path_;
};

} // namespace

Result salvage_archive(const Options& o) {
  // A damaged event file is expected here (a process killed while writing it) and reported in the
  // summary; OTF2's own diagnostics would only repeat it on stderr.
  format::quiet_otf2_errors();
  std::error_code ec;
  const fs::path in = fs::absolute(fs::path(o.input)).lexically_normal();
  if (!fs::is_directory(in, ec))
    throw input_error("'" + o.input + "': not a directory (give the archive directory)");
  const fs::path salvage_dir = in / snapshot::kDirName;
  if (!fs::is_directory(salvage_dir, ec)) {
    if (fs::exists(in / "traces.otf2", ec))
      throw input_error("'" + o.input + "': a complete archive (nothing to salvage)");
    throw input_error("'" + o.input + "': no salvage files ('" + snapshot::kDirName +
                      "/' is missing: not a libhtrace archive, or the run ended before "
                      "MPI_Init returned)");
  }
  const fs::path out = format::output_path(o.output);
  if (fs::exists(fs::symlink_status(out, ec)))
    throw output_error("'" + o.output + "': output exists");
  format::check_output_parent(out, o.output);

  std::vector<RankInput> ranks = load_ranks(salvage_dir);
  Result result;
  // Cut-off ranks get their marker region before unification, like any other region. The
  // definitions move into `all`: held once, they are most of what a location costs here.
  std::vector<RankDefs> all;
  all.reserve(ranks.size());
  for (auto& r : ranks) {
    if (!r.finished && !r.snap.defs.locations.empty()) {
      r.marker_region = static_cast<std::uint32_t>(r.snap.defs.regions.size());
      r.snap.defs.regions.push_back({"htrace: trace cut off (" + short_cause(r.end) + ")",
                                     record::Paradigm::Measurement,
                                     record::RegionRole::Artificial});
    }
    all.push_back(std::move(r.snap.defs));
  }
  const record::Unified unified = record::unify(all);
  std::vector<record::RmaIoMaps> rma_io_maps;
  const record::RmaIoGlobal rma_io = unify_rma_io(ranks, unified, rma_io_maps);

  TempDir temp(out.parent_path() /
               ("." + out.filename().string() + ".htrace-salvage-" + std::to_string(::getpid())));
  if (!fs::create_directory(temp.path(), ec))
    throw output_error("'" + temp.path().string() +
                       "': cannot create: " + (ec ? ec.message() : std::string("exists")));
  const fs::path scratch = temp.path() / ".scratch";
  // Rank 0's clock and properties (the first rank with salvage files if rank 0 has none).
  const RankInput& first =
      *std::find_if(ranks.begin(), ranks.end(), [](const RankInput& r) { return r.found; });
  for (const auto& r : ranks)
    if (r.found && r.snap.event_chunk_size != first.snap.event_chunk_size)
      throw input_error("'" + salvage_dir.string() + "': files of different runs");
  write_scratch(scratch, in / "traces", all, unified, first.snap.event_chunk_size);

  ReaderPtr reader(OTF2_Reader_Open((scratch / "traces.otf2").c_str()));
  if (!reader) throw internal_error("cannot read back the scratch archive");
  OTF2_Reader_SetSerialCollectiveCallbacks(reader.get());
  ArchivePtr writer = open_for_writing(temp.path(), first.snap.event_chunk_size);
  OTF2_ErrorCode rc = OTF2_Archive_OpenEvtFiles(writer.get());
  if (rc != OTF2_SUCCESS) throw output_error(otf2_failure("opening event files", rc));
  std::unique_ptr<OTF2_EvtReaderCallbacks, void (*)(OTF2_EvtReaderCallbacks*)> cbs(
      OTF2_EvtReaderCallbacks_New(), OTF2_EvtReaderCallbacks_Delete);
  register_callbacks(cbs.get());

  for (const auto& d : all)
    for (const auto& loc : d.locations)
      OTF2_Reader_SelectLocation(reader.get(), loc.id);
  if (OTF2_Reader_OpenEvtFiles(reader.get()) != OTF2_SUCCESS)
    throw internal_error("cannot open the scratch archive's event files");

  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (std::size_t r = 0; r < all.size(); ++r) {
    Result::Rank rank_result;
    rank_result.rank = static_cast<int>(r);
    rank_result.finished = ranks[r].finished;
    rank_result.has_definitions = ranks[r].found;
    rank_result.end = ranks[r].end;
    for (auto& loc : all[r].locations) {
      Result::Location loc_result;
      loc_result.id = loc.id;
      LocationCopy copy;
      copy.out = OTF2_Archive_GetEvtWriter(writer.get(), loc.id);
      if (!copy.out) throw output_error("cannot create an event writer");
      const fs::path source = in / "traces" / (std::to_string(loc.id) + ".evt");
      if (fs::is_regular_file(source, ec)) {
        // A process killed while OTF2 wrote its file leaves it empty, or ending inside a chunk:
        // the reader is asked for the whole events only (see event_file_scan.h).
        const EventFileExtent extent =
            scan_event_file(source.string(), first.snap.event_chunk_size);
        rc = OTF2_SUCCESS;
        std::uint64_t n = 0;
        if (extent.events > 0) {
          OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader.get(), loc.id);
          rc = OTF2_ERROR_INTEGRITY_FAULT;
          if (er) {
            OTF2_Reader_RegisterEvtCallbacks(reader.get(), er, cbs.get(),
                                             static_cast<format::EventSink*>(&copy));
            rc = OTF2_Reader_ReadLocalEvents(reader.get(), er, extent.events, &n);
            OTF2_Reader_CloseEvtReader(reader.get(), er);
          }
        }
        if (copy.write_error != OTF2_SUCCESS)
          throw output_error(otf2_failure("'" + o.output + "': writing events", copy.write_error));
        loc_result.missing = extent.missing;
        if (!copy.damage.empty()) {
          loc_result.file_damaged = true;
          loc_result.damage = copy.damage;
        } else if (rc != OTF2_SUCCESS || n != extent.events) {
          loc_result.file_damaged = true;
          loc_result.damage = "OTF2 read " + std::to_string(n) + " of its " +
                              std::to_string(extent.events) + " whole events (" +
                              OTF2_Error_GetDescription(rc) + ")";
        } else if (fs::file_size(source, ec) == 0) {
          loc_result.file_damaged = true;
          loc_result.damage = "the file is empty";
        } else if (!extent.damage.empty()) {
          loc_result.file_damaged = true;
          loc_result.damage = extent.damage;
        }
      }
      loc_result.events = copy.events;
      result.unknown_records += copy.unknown;
      if (!ranks[r].finished && copy.events > 0) {
        // Visibly cut off: the marker, then every open region closed, all at the last time.
        const OTF2_RegionRef marker = ranks[r].marker_region; // a local id, like the events'

        const OTF2_TimeStamp t = copy.last;
        rc = OTF2_EvtWriter_Enter(copy.out, nullptr, t, marker);
        if (rc == OTF2_SUCCESS) rc = OTF2_EvtWriter_Leave(copy.out, nullptr, t, marker);
        for (auto it = copy.open.rbegin(); rc == OTF2_SUCCESS && it != copy.open.rend(); ++it)
          rc = OTF2_EvtWriter_Leave(copy.out, nullptr, t, *it);
        if (rc != OTF2_SUCCESS)
          throw output_error(otf2_failure("'" + o.output + "': writing events", rc));
        loc_result.closed = copy.open.size();
        copy.events += 2 + copy.open.size();
      }
      rc = OTF2_Archive_CloseEvtWriter(writer.get(), copy.out);
      if (rc != OTF2_SUCCESS)
        throw output_error(otf2_failure("'" + o.output + "': writing events", rc));
      loc.events = copy.events;
      if (copy.events) {
        lo = std::min<std::int64_t>(lo, static_cast<std::int64_t>(copy.first));
        hi = std::max<std::int64_t>(hi, static_cast<std::int64_t>(copy.last));
      }
      rank_result.locations.push_back(loc_result);
    }
    result.ranks.push_back(std::move(rank_result));
  }
  reader.reset();
  rc = OTF2_Archive_CloseEvtFiles(writer.get());
  if (rc != OTF2_SUCCESS)
    throw output_error(otf2_failure("'" + o.output + "': closing event files", rc));

  // Global definitions, with the events actually written; the clock of first's start.
  if (lo > hi) lo = hi = first.snap.start_global_ns;
  record::ClockInfo clock;
  clock.global_offset = static_cast<std::uint64_t>(std::max<std::int64_t>(lo, 0));
  clock.trace_length = static_cast<std::uint64_t>(hi - lo);
  clock.realtime_at_offset =
      static_cast<std::uint64_t>(first.snap.start_realtime_ns + (lo - first.snap.start_global_ns));
  std::string error = write_mappings(writer.get(), all, unified, rma_io_maps);
  if (error.empty())
    error = record::write_global_definitions(reinterpret_cast<OTF2_Archive_struct*>(writer.get()),
                                             all, unified, clock, &rma_io);
  if (!error.empty()) throw output_error("'" + o.output + "': " + error);

  std::vector<int> finished, without_final;
  std::string ends;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankDefs& defs = all[i];
    if (ranks[i].finished) finished.push_back(defs.rank);
    bool has_final = false;
    for (const auto& p : defs.process_properties)
      has_final = has_final || p.first == HTRACE_LPROP_FINAL_TIME;
    if (!has_final) without_final.push_back(defs.rank);
    ends +=
        (ends.empty() ? "" : "; ") + ("rank " + std::to_string(defs.rank) + ": " + ranks[i].end);
  }
  auto properties = first.snap.archive_properties;
  properties.emplace_back(HTRACE_PROP_RUN_END, ends);
  // OTF2 takes an empty value as "remove the property".
  properties.emplace_back(HTRACE_PROP_RUN_FINISHED_RANKS,
                          finished.empty() ? std::string("none") : join_ranks(finished));
  properties.emplace_back(HTRACE_PROP_SALVAGE_VERSION, HTRACE_VERSION_STRING);
  properties.emplace_back(HTRACE_PROP_CLOCK_FINAL,
                          without_final.empty()
                              ? std::string("present")
                              : "absent on ranks " + join_ranks(without_final) +
                                    " (run salvaged; the INIT measurement is used there)");
  for (const auto& p : properties) {
    rc = OTF2_Archive_SetProperty(writer.get(), p.first.c_str(), p.second.c_str(), true);
    if (rc != OTF2_SUCCESS)
      throw output_error(otf2_failure("'" + o.output + "': property " + p.first, rc));
  }
  rc = OTF2_Archive_Close(writer.release());
  if (rc != OTF2_SUCCESS) throw output_error(otf2_failure("'" + o.output + "'", rc));
  // OTF2 reports success even when the anchor file could not be written (a full disk).
  if (fs::file_size(temp.path() / "traces.otf2", ec) == 0 || ec)
    throw output_error("'" + o.output + "': the anchor file could not be written");
  fs::remove_all(scratch, ec);
  temp.commit(out, o.output);
  return result;
}

} // namespace htrace::salvage
