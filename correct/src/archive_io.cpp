#include "correct/archive_io.h"

#include "correct/event_file_rewrite.h"
#include "correct/exchange.h"
#include "correct/interrupt_cleanup.h"
#include "correct/record_store.h"
#include "format/anchor_file.h"
#include "format/event_file.h"
#include "format/otf2_library.h"
#include "format/record_tables.h"
#include "htrace/archive_properties.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdio.h>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

// OTF2's collective context (declared, not defined, by OTF2): the communicator of the ranks that
// share an archive.
struct OTF2_CollectiveContext {
  MPI_Comm comm = MPI_COMM_NULL;
};

namespace htrace::correct {

// OTF2's collective callbacks over MPI, owned by the reader or writer they serve and destroyed
// only after it is closed. OTF2's own OTF2_MPI_*_SetCollectiveCallbacks (OTF2_MPI_Collectives.h)
// free their state when registering fails (as it does for a damaged anchor file), while the
// archive keeps pointers into it and calls them again when it is closed: with more than one rank
// that crashed htrace-correct in OTF2_Reader_Close.
class Otf2Collectives {
public:
  // Collective over `comm` (duplicated: OTF2's messages never meet the engine's).
  explicit Otf2Collectives(MPI_Comm comm) { MPI_Comm_dup(comm, &context_.comm); }
  ~Otf2Collectives() { MPI_Comm_free(&context_.comm); }
  Otf2Collectives(const Otf2Collectives&) = delete;
  Otf2Collectives& operator=(const Otf2Collectives&) = delete;

  OTF2_ErrorCode attach(OTF2_Reader* reader) {
    return OTF2_Reader_SetCollectiveCallbacks(reader, &kCallbacks, nullptr, &context_, nullptr);
  }
  OTF2_ErrorCode attach(OTF2_Archive* archive) {
    return OTF2_Archive_SetCollectiveCallbacks(archive, &kCallbacks, nullptr, &context_, nullptr);
  }

private:
  static MPI_Datatype type(OTF2_Type t) {
    switch (t) {
    case OTF2_TYPE_UINT8:
      return MPI_UINT8_T;
    case OTF2_TYPE_INT8:
      return MPI_INT8_T;
    case OTF2_TYPE_UINT16:
      return MPI_UINT16_T;
    case OTF2_TYPE_INT16:
      return MPI_INT16_T;
    case OTF2_TYPE_UINT32:
      return MPI_UINT32_T;
    case OTF2_TYPE_INT32:
      return MPI_INT32_T;
    case OTF2_TYPE_UINT64:
      return MPI_UINT64_T;
    case OTF2_TYPE_INT64:
      return MPI_INT64_T;
    case OTF2_TYPE_FLOAT:
      return MPI_FLOAT;
    case OTF2_TYPE_DOUBLE:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
    }
  }
  static OTF2_CallbackCode result(int rc) {
    return rc == MPI_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
  }
  static int count(uint32_t n) { return static_cast<int>(n); }
  // Counts and displacements of the root's side of gatherv/scatterv.
  static void layout(const OTF2_CollectiveContext* c, const uint32_t* n, std::vector<int>& counts,
                     std::vector<int>& displs) {
    int size = 1;
    MPI_Comm_size(c->comm, &size);
    counts.resize(static_cast<size_t>(size)), displs.resize(static_cast<size_t>(size));
    for (int r = 0, at = 0; r < size; ++r)
      counts[size_t(r)] = count(n[r]), displs[size_t(r)] = at, at += count(n[r]);
  }
  static bool is_root(const OTF2_CollectiveContext* c, uint32_t root) {
    int rank = 0;
    MPI_Comm_rank(c->comm, &rank);
    return static_cast<uint32_t>(rank) == root;
  }

  static OTF2_CallbackCode get_size(void*, OTF2_CollectiveContext* c, uint32_t* size) {
    int n = 1;
    const int rc = MPI_Comm_size(c->comm, &n);
    *size = static_cast<uint32_t>(n);
    return result(rc);
  }
  static OTF2_CallbackCode get_rank(void*, OTF2_CollectiveContext* c, uint32_t* rank) {
    int r = 0;
    const int rc = MPI_Comm_rank(c->comm, &r);
    *rank = static_cast<uint32_t>(r);
    return result(rc);
  }
  static OTF2_CallbackCode barrier(void*, OTF2_CollectiveContext* c) {
    return result(MPI_Barrier(c->comm));
  }
  static OTF2_CallbackCode bcast(void*, OTF2_CollectiveContext* c, void* data, uint32_t n,
                                 OTF2_Type t, uint32_t root) {
    return result(MPI_Bcast(data, count(n), type(t), count(root), c->comm));
  }
  static OTF2_CallbackCode gather(void*, OTF2_CollectiveContext* c, const void* in, void* out,
                                  uint32_t n, OTF2_Type t, uint32_t root) {
    return result(MPI_Gather(in, count(n), type(t), out, count(n), type(t), count(root), c->comm));
  }
  static OTF2_CallbackCode gatherv(void*, OTF2_CollectiveContext* c, const void* in, uint32_t n,
                                   void* out, const uint32_t* out_n, OTF2_Type t, uint32_t root) {
    std::vector<int> counts, displs;
    if (is_root(c, root)) layout(c, out_n, counts, displs);
    return result(MPI_Gatherv(in, count(n), type(t), out, counts.data(), displs.data(), type(t),
                              count(root), c->comm));
  }
  static OTF2_CallbackCode scatter(void*, OTF2_CollectiveContext* c, const void* in, void* out,
                                   uint32_t n, OTF2_Type t, uint32_t root) {
    return result(MPI_Scatter(in, count(n), type(t), out, count(n), type(t), count(root), c->comm));
  }
  static OTF2_CallbackCode scatterv(void*, OTF2_CollectiveContext* c, const void* in,
                                    const uint32_t* in_n, void* out, uint32_t n, OTF2_Type t,
                                    uint32_t root) {
    std::vector<int> counts, displs;
    if (is_root(c, root)) layout(c, in_n, counts, displs);
    return result(MPI_Scatterv(in, counts.data(), displs.data(), type(t), out, count(n), type(t),
                               count(root), c->comm));
  }
  // Called by OTF2 when the archive closes; the communicator is freed by the destructor.
  static void release(void*, OTF2_CollectiveContext*, OTF2_CollectiveContext*) {}

  static constexpr OTF2_CollectiveCallbacks kCallbacks = {release, get_size, get_rank, nullptr,
                                                          nullptr, barrier,  bcast,    gather,
                                                          gatherv, scatter,  scatterv};
  OTF2_CollectiveContext context_;
};

namespace {
// Collective clean-up (closing an OTF2 reader or archive) may run unless a rank-local exception
// is unwinding: the other ranks would not join it (exchange.h).
bool may_clean_up_together() {
  return std::uncaught_exceptions() == 0 || unwinding_together();
}

} // namespace

std::string agree(MPI_Comm comm, const std::function<std::string()>& fn, ErrorKind kind) {
  std::string result, error;
  try {
    result = fn();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
    kind = error_kind(e, kind);
  }
  check_together(comm, error, 0, kind);
  return result;
}

namespace {
// fsync of a directory, so that the names in it (a rename, new files) are durable too.
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd); // best effort: some file systems refuse fsync of a directory
  ::close(fd);
}

// Every rank syncs its share of the files under `dir` (the k-th file in a sorted walk belongs to
// rank k mod size), so P ranks sync in parallel; rank 0 also syncs the directories. Returns the
// first failure ("" if none), naming the file: a full disk can surface only here.
std::string sync_files(const std::string& dir, int rank, int size) {
  std::vector<fs::path> files, dirs{fs::path(dir)};
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec))
      dirs.push_back(it->path());
    else if (it->is_regular_file(ec))
      files.push_back(it->path());
  }
  if (ec) return "'" + dir + "': cannot list the finished archive: " + ec.message();
  std::sort(files.begin(), files.end());
  for (std::size_t i = static_cast<std::size_t>(rank); i < files.size();
       i += static_cast<std::size_t>(size)) {
    const int fd = ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      const std::string cause = std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return "'" + files[i].string() + "': cannot write to disk: " + cause;
    }
    ::close(fd);
  }
  if (rank == 0)
    for (const auto& d : dirs)
      sync_directory(d.string());
  return "";
}

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
    throw output_error("'" + o.output + "': output exists (use --force to replace it)");
  fs::path in = fs::absolute(fs::path(o.input)).lexically_normal();
  if (fs::is_regular_file(in, ec)) in = in.parent_path();
  if (fs::exists(out, ec) && fs::equivalent(in, out, ec))
    throw output_error("'" + o.output + "': output is the input archive");
  if (!fs::is_directory(out.parent_path(), ec))
    throw output_error("'" + o.output + "': parent directory does not exist");
  // Checked here so that an unwritable place fails before the correction, not after it.
  if (::access(out.parent_path().c_str(), W_OK | X_OK) != 0)
    throw output_error("'" + out.parent_path().string() +
                       "': cannot create OUT there: " + std::strerror(errno));
  long pid = rank == 0 ? static_cast<long>(getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
  return TempOutput((out.parent_path() /
                     ("." + out.filename().string() + ".htrace-correct-" + std::to_string(pid)))
                        .string(),
                    comm);
}

TempOutput::TempOutput(std::string dir, MPI_Comm comm) : dir_(std::move(dir)), comm_(comm) {
  remove_on_interrupt(dir_);
}

TempOutput& TempOutput::operator=(TempOutput&& o) noexcept {
  if (this != &o) {
    remove();
    dir_ = std::exchange(o.dir_, std::string());
    name_ = o.name_;
    comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
  }
  return *this;
}

TempOutput::~TempOutput() {
  remove();
}

void TempOutput::remove() {
  if (dir_.empty() || comm_ == MPI_COMM_NULL) return;
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  // Every rank must be done with its files first (after an error raised together; a rank-local
  // one aborts the job anyway).
  if (may_clean_up_together()) MPI_Barrier(comm_);
  if (rank == 0) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (ec)
      std::fprintf(stderr, "htrace-correct: warning: '%s': cannot remove: %s\n", dir_.c_str(),
                   ec.message().c_str());
  }
  forget_on_interrupt();
  dir_.clear();
}

void TempOutput::commit(const Options& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  MPI_Barrier(comm_); // every rank's files are closed
  // A rename is only as durable as the data it points at: without this, a crash shortly after
  // could leave OUT in place with empty files.
  std::string error = sync_files(dir_, rank, size);
  check_together(comm_, error, 0, ErrorKind::Output);
  if (rank == 0) {
    const fs::path target = output_path(o);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(target, ec))) {
      if (::rename(dir_.c_str(), target.c_str()) != 0)
        error = "'" + o.output +
                "': cannot rename the finished archive into place: " + std::strerror(errno);
      else
        dir_.clear(); // committed
    } else if (::renameat2(AT_FDCWD, dir_.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) ==
               0) {
      // --force: OUT was never missing; dir_ now holds the old archive, removed below.
    } else if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
      error = "'" + o.output + "': cannot replace: " + std::strerror(errno);
    } else {
      // A file system without RENAME_EXCHANGE: move the old OUT aside, rename the new one into
      // place, and put the old one back if that fails.
      const std::string aside = dir_ + "-old";
      if (::rename(target.c_str(), aside.c_str()) != 0) {
        error = "'" + o.output + "': cannot replace: " + std::strerror(errno);
      } else if (::rename(dir_.c_str(), target.c_str()) != 0) {
        error = "'" + o.output +
                "': cannot rename the finished archive into place: " + std::strerror(errno);
        if (::rename(aside.c_str(), target.c_str()) != 0)
          error += "; the previous OUT is kept as '" + aside + "'";
      } else {
        dir_ = aside; // the old archive, removed below
      }
    }
  }
  if (rank == 0 && error.empty())
    sync_directory(output_path(o).parent_path().string()); // the rename
  check_together(comm_, error, 0, ErrorKind::Output);
  if (rank == 0 && !dir_.empty()) {
    // The old OUT of --force: the new archive is in place, so a failure here only leaves it.
    std::error_code ec;
    fs::remove_all(dir_, ec);
    if (ec)
      std::fprintf(stderr,
                   "htrace-correct: warning: '%s': cannot remove the replaced archive: %s\n",
                   dir_.c_str(), ec.message().c_str());
  }
  forget_on_interrupt();
  dir_.clear();
}

void ArchiveReader::Close::operator()(OTF2_Reader* r) const {
  if (may_clean_up_together()) OTF2_Reader_Close(r);
}

ArchiveReader::ArchiveReader(const std::string& anchor, MPI_Comm comm) : anchor_(anchor) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size > 1) collectives_ = std::make_unique<Otf2Collectives>(comm);
  const std::string damage = format::anchor_file_damage(anchor);
  check_together(comm,
                 damage.empty() ? "" : "'" + anchor + "': not an OTF2 archive (" + damage + ")");
  reader_.reset(OTF2_Reader_Open(anchor.c_str()));
  int ok = reader_ ? 1 : 0, all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all) {
    reader_.reset();
    fail_together(comm, "'" + anchor + "': cannot open as an OTF2 archive");
  }
  // OTF2 reads the anchor file here (rank 0, then broadcast): a damaged one fails now.
  const OTF2_ErrorCode rc = collectives_ ? collectives_->attach(reader_.get())
                                         : OTF2_Reader_SetSerialCollectiveCallbacks(reader_.get());
  check_together(comm, rc == OTF2_SUCCESS ? ""
                                          : "'" + anchor + "': cannot read the anchor file (" +
                                                format::otf2_cause(rc) + ")");
  OTF2_Reader_GetChunkSize(reader_.get(), &event_chunk_, &def_chunk_);
  // The POSIX substrate keeps <location>.evt files in the directory named like the anchor file.
  OTF2_FileSubstrate substrate = OTF2_SUBSTRATE_UNDEFINED;
  OTF2_Compression compression = OTF2_COMPRESSION_UNDEFINED;
  OTF2_Reader_GetFileSubstrate(reader_.get(), &substrate);
  OTF2_Reader_GetCompression(reader_.get(), &compression);
  if (substrate == OTF2_SUBSTRATE_POSIX && compression == OTF2_COMPRESSION_NONE)
    event_dir_ = fs::path(anchor).replace_extension().string();
  uint8_t major = 0, minor = 0, bugfix = 0;
  OTF2_Reader_GetVersion(reader_.get(), &major, &minor, &bugfix);
  known_format_ =
      major < OTF2_VERSION_MAJOR || (major == OTF2_VERSION_MAJOR && minor <= OTF2_VERSION_MINOR);
  // OTF2 reads a missing local definition file as an empty one, and the file holds the
  // location's id mappings: without it, its events would silently use the wrong ids. Writers
  // write one for every location (OTF2's, htrace's, Score-P's), so one is required unless the
  // archive has none at all; htrace's archives always have them.
  if (!event_dir_.empty()) {
    char* creator = nullptr;
    if (OTF2_Reader_GetCreator(reader_.get(), &creator) == OTF2_SUCCESS && creator) {
      local_defs_required_ = std::strncmp(creator, "htrace", 6) == 0;
      free(creator);
    }
    std::error_code ec;
    for (fs::directory_iterator it(event_dir_, ec), end; !ec && it != end && !local_defs_required_;
         it.increment(ec))
      if (it->path().extension() == ".def") local_defs_required_ = true;
  }
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
  if (reader_ && evt_open_ && may_clean_up_together()) OTF2_Reader_CloseEvtFiles(reader_.get());
}

void ArchiveReader::open_locations(const Definitions& defs,
                                   const std::vector<uint32_t>& processes) {
  OTF2_Reader* reader = reader_.get();
  for (uint32_t p : processes)
    for (uint32_t li : defs.processes[p].locations)
      OTF2_Reader_SelectLocation(reader, defs.locations[li].id);
  // Local definitions carry the mapping tables and clock offsets the reader applies to events.
  // (Both calls are collective in OTF2: errors are raised after them.)
  bool defs_open = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  const OTF2_ErrorCode evt_rc = OTF2_Reader_OpenEvtFiles(reader);
  evt_open_ = evt_rc == OTF2_SUCCESS;
  std::string failed;
  if (!evt_open_)
    failed = "'" + anchor_ + "': cannot open the event files (" + format::otf2_cause(evt_rc) + ")";
  const std::unique_ptr<OTF2_DefReaderCallbacks, void (*)(OTF2_DefReaderCallbacks*)> cbs(
      OTF2_DefReaderCallbacks_New(), OTF2_DefReaderCallbacks_Delete);
  OTF2_DefReaderCallbacks_SetMappingTableCallback(cbs.get(), note_mapping_table);
  OTF2_DefReaderCallbacks_SetClockOffsetCallback(cbs.get(), note_clock_offset);
  for (uint32_t p : processes)
    for (uint32_t li : defs.processes[p].locations) {
      if (!failed.empty()) break;
      const OTF2_LocationRef id = defs.locations[li].id;
      const fs::path file = fs::path(event_dir_) / (std::to_string(id) + ".def");
      const std::string where = "location " + std::to_string(id) + " (" + defs.locations[li].name +
                                "): '" + file.string() + "'";
      if (local_defs_required_) {
        std::error_code ec;
        const auto size = fs::file_size(file, ec);
        if (ec) {
          failed = where + ": missing local definition file (" + ec.message() + ")";
          break;
        }
        if (size == 0) {
          failed = where + ": empty local definition file";
          break;
        }
      }
      if (!defs_open) {
        rewritten_by_definitions_.insert(id); // unknown: leave the location to OTF2's reader
        continue;
      }
      // OTF2 opens the file here and reads its first chunk: no reader means a damaged file, or
      // none at all where none is required.
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, id);
      std::error_code ec;
      if (!dr && !local_defs_required_ && !fs::exists(file, ec)) {
        format::forget_otf2_diagnostics(); // (OTF2 complained about the missing file)
        continue;
      }
      if (!dr) {
        failed = where + ": corrupt local definition file (" +
                 format::otf2_cause(OTF2_ERROR_INVALID_DATA) + ")";
        break;
      }
      bool rewritten = false;
      OTF2_Reader_RegisterDefCallbacks(reader, dr, cbs.get(), &rewritten);
      uint64_t n = 0;
      OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
      OTF2_Reader_CloseDefReader(reader, dr);
      if (rc != OTF2_SUCCESS)
        failed = where + ": corrupt local definition file (" + format::otf2_cause(rc) + ")";
      if (rewritten) rewritten_by_definitions_.insert(id);
    }
  if (defs_open) OTF2_Reader_CloseDefFiles(reader);
  if (!failed.empty()) throw input_error(failed);
}

void ArchiveReader::close_events() {
  if (evt_open_) OTF2_Reader_CloseEvtFiles(reader_.get());
  evt_open_ = false;
}

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
// records' ids. Returns false if the input has none.
bool copy_local_definitions(const std::string& event_dir, const std::string& out_dir,
                            OTF2_LocationRef id) {
  const std::string name = std::to_string(id) + ".def";
  std::error_code ec;
  if (!fs::exists(fs::path(event_dir) / name, ec)) return false;
  fs::copy_file(fs::path(event_dir) / name, fs::path(out_dir) / name,
                fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw output_error("'" + (fs::path(out_dir) / name).string() +
                       "': cannot copy the local definition file: " + ec.message());
  return true;
}

// The output archive: closed (collectively) when destroyed if write_corrected did not get to
// close it, after a failure that is being reported already.
class OutputArchive {
public:
  OutputArchive(const TempOutput& out, const ArchiveReader& reader, MPI_Comm comm) : comm_(comm) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    if (size > 1) collectives_ = std::make_unique<Otf2Collectives>(comm);
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
  MPI_Comm comm_;
  std::unique_ptr<Otf2Collectives> collectives_; // outlives archive_ (closed in the destructor)
  OTF2_Archive* archive_ = nullptr;
};

} // namespace

void write_corrected(ArchiveReader& reader, const Definitions& defs,
                     const std::map<std::string, std::string>& properties, const LocalModel& model,
                     TimeSource& times, const TempOutput& out, MPI_Comm comm, Report& report) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  OutputArchive output(out, reader, comm);
  OTF2_Archive* archive = output.get();
  const std::string out_anchor = (fs::path(out.dir()) / (out.name() + ".otf2")).string();
  agree(
      comm,
      [&] {
        const auto check = [&](OTF2_ErrorCode rc, const char* what) {
          if (rc != OTF2_SUCCESS)
            throw output_error("'" + out_anchor + "': " + what + " (" + format::otf2_cause(rc) +
                               ")");
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

  // The records were counted by type while reading; the writer's own count is not needed.
  std::vector<uint64_t> written(static_cast<size_t>(format::event_record_type_count()));
  std::vector<char> copied(model.locations.size()); // event file copied record by record
  int64_t last = 0; // the latest corrected timestamp, for the clock properties
  const std::string out_events = (fs::path(out.dir()) / out.name()).string();
  // OTF2 opens and closes event and definition files collectively: every rank reaches those
  // calls, and a failure in between is thrown after them, on every rank (agree). Failures are
  // output errors unless they name another kind (a damaged input found only now).
  agree(
      comm,
      [&] {
        std::string failed;
        std::optional<ErrorKind> failed_kind;
        const auto attempt = [&](auto&& step) {
          if (!failed.empty()) return;
          try {
            step();
          } catch (const std::exception& e) {
            failed = e.what();
            failed_kind = error_kind(e, ErrorKind::Output);
          }
        };
        const auto check = [&](OTF2_ErrorCode rc, const std::string& what) {
          if (rc != OTF2_SUCCESS && failed.empty())
            failed = what + " (" + format::otf2_cause(rc) + ")", failed_kind = ErrorKind::Output;
        };
        attempt([&] {
          std::error_code ec;
          fs::create_directories(out_events, ec);
          if (ec) throw output_error("'" + out_events + "': cannot create: " + ec.message());
        });
        check(OTF2_Archive_OpenEvtFiles(archive), "'" + out_events + "': cannot open event files");
        for (size_t i = 0; i < model.locations.size(); ++i)
          attempt([&] {
            const LocationModel& loc = model.locations[i];
            const LocationInfo& info = defs.locations[loc.location];
            const std::string file = "'" + format::event_file_path(out_events, info.id) + "'";
            times.begin(i);
            std::optional<int64_t> loc_last;
            if (loc.copy_file) {
              loc_last = rewrite_event_file(format::event_file_path(reader.event_dir(), info.id),
                                            format::event_file_path(out_events, info.id),
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
              if (!w) throw output_error(file + ": cannot create");
              // The writer is closed (its last buffer flushed) even if writing failed.
              try {
                loc_last = write_stored_location(loc.copy_file ? reread : loc.records, times, w,
                                                 written.data(), file);
              } catch (...) {
                OTF2_Archive_CloseEvtWriter(archive, w);
                throw;
              }
              const OTF2_ErrorCode rc = OTF2_Archive_CloseEvtWriter(archive, w);
              if (rc != OTF2_SUCCESS)
                throw output_error(file + ": cannot write (" + format::otf2_cause(rc) + ")");
            }
            last = std::max(last, *loc_last);
          });
        check(OTF2_Archive_CloseEvtFiles(archive),
              "'" + out_events + "': cannot write event files");
        // Every location gets a local definition file: records written through the library carry
        // global ids (an empty file), copied ones keep the input's file with its mapping tables.
        check(OTF2_Archive_OpenDefFiles(archive),
              "'" + out_events + "': cannot open local definition files");
        for (size_t i = 0; i < model.locations.size(); ++i)
          attempt([&] {
            const OTF2_LocationRef id = defs.locations[model.locations[i].location].id;
            if (copied[i] && copy_local_definitions(reader.event_dir(), out_events, id)) return;
            const std::string file =
                "'" + (fs::path(out_events) / (std::to_string(id) + ".def")).string() + "'";
            OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(archive, id);
            if (!w) throw output_error(file + ": cannot create");
            const OTF2_ErrorCode rc = OTF2_Archive_CloseDefWriter(archive, w);
            if (rc != OTF2_SUCCESS)
              throw output_error(file + ": cannot write (" + format::otf2_cause(rc) + ")");
          });
        check(OTF2_Archive_CloseDefFiles(archive),
              "'" + out_events + "': cannot write local definition files");
        if (!failed.empty()) throw Error(failed_kind.value_or(ErrorKind::Output), failed);
        return std::string();
      },
      ErrorKind::Output);

  MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT64_T, MPI_MAX, comm);
  std::vector<uint64_t> def_counts(static_cast<size_t>(format::def_record_type_count()));
  uint64_t def_unknown = 0;
  const std::string out_defs = (fs::path(out.dir()) / (out.name() + ".def")).string();
  agree(
      comm,
      [&] {
        if (rank != 0) return std::string();
        OTF2_GlobalDefWriter* gw = OTF2_Archive_GetGlobalDefWriter(archive);
        if (!gw) throw output_error("'" + out_defs + "': cannot create");
        OTF2_GlobalDefReader* gr = OTF2_Reader_GetGlobalDefReader(reader.get());
        if (!gr) throw input_error("cannot open the global definitions");
        DefCopy copy(gw, static_cast<uint64_t>(last));
        OTF2_GlobalDefReaderCallbacks* dcbs = OTF2_GlobalDefReaderCallbacks_New();
        format::register_copy_defs(dcbs);
        OTF2_GlobalDefReaderCallbacks_SetUnknownCallback(dcbs, count_unknown_def);
        OTF2_Reader_RegisterGlobalDefCallbacks(reader.get(), gr, dcbs, &copy);
        OTF2_GlobalDefReaderCallbacks_Delete(dcbs);
        uint64_t n = 0;
        OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader.get(), gr, &n);
        OTF2_Reader_CloseGlobalDefReader(reader.get(), gr);
        // Flushes the global definitions: a write error shows here, not in Archive_Close.
        const OTF2_ErrorCode closed = OTF2_Archive_CloseGlobalDefWriter(archive, gw);
        if (copy.error == OTF2_SUCCESS) copy.error = closed;
        if (copy.error != OTF2_SUCCESS)
          throw output_error("'" + out_defs + "': cannot write (" + format::otf2_cause(copy.error) +
                             ")");
        if (rc != OTF2_SUCCESS)
          throw input_error("corrupt global definitions (" + format::otf2_cause(rc) + ")");
        def_counts = copy.counts;
        def_unknown = copy.unknown;
        return std::string();
      },
      ErrorKind::Output);
  // The global definitions are written and the anchor file created here.
  output.close("'" + out.dir() + "'");

  std::vector<uint64_t> counts = model.event_counts;
  MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM,
                comm);
  uint64_t unknown = model.unknown_events;
  uint64_t copied_files = static_cast<uint64_t>(std::count(copied.begin(), copied.end(), 1));
  MPI_Allreduce(MPI_IN_PLACE, &unknown, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &copied_files, 1, MPI_UINT64_T, MPI_SUM, comm);
  report.copied_event_files = copied_files;
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i]) report.event_records[format::event_record_name(static_cast<int>(i))] = counts[i];
  for (size_t i = 0; i < def_counts.size(); ++i)
    if (def_counts[i])
      report.definition_records[format::def_record_name(static_cast<int>(i))] = def_counts[i];
  report.unknown_events = unknown;
  report.unknown_definitions = def_unknown;
}

} // namespace htrace::correct
