// Opening the input archive, the atomic output directory, and the rewrite that copies every record
// with its corrected timestamp. Errors are agreed collectively so no rank hangs when another fails.
#ifndef HTRACE_CORRECT_ARCHIVE_IO_H
#define HTRACE_CORRECT_ARCHIVE_IO_H

#include "correct/definitions.h"
#include "correct/model_reader.h"
#include "correct/options.h"
#include "correct/report.h"
#include "correct/time_source.h"
#include "format/error.h"

#include <functional>
#include <map>
#include <memory>
#include <mpi.h>
#include <otf2/otf2.h>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

namespace htrace::correct {

// Runs fn on every rank; if it throws anywhere, every rank throws the lowest failing rank's
// message, as an agreed Error of its kind (`kind` for exceptions that name none).
std::string agree(MPI_Comm comm, const std::function<std::string()>& fn,
                  ErrorKind kind = ErrorKind::Input);
template <class F>
auto agree_value(MPI_Comm comm, F fn, ErrorKind kind = ErrorKind::Input) -> decltype(fn()) {
  decltype(fn()) value{};
  agree(
      comm,
      [&] {
        value = fn();
        return std::string();
      },
      kind);
  return value;
}

// The temporary archive directory next to OUT (`.OUT.htrace-correct-PID`). Destroyed before it
// was committed (any failure), rank 0 removes it once every rank is done with it: no partial
// output is left behind.
class TempOutput {
public:
  TempOutput() = default;
  // Until it is committed or removed, an interrupt (SIGINT, SIGTERM, SIGHUP) removes `dir`.
  TempOutput(std::string dir, MPI_Comm comm);
  TempOutput(TempOutput&& o) noexcept { *this = std::move(o); }
  TempOutput& operator=(TempOutput&& o) noexcept;
  ~TempOutput();
  const std::string& dir() const { return dir_; }
  const std::string& name() const { return name_; }
  // Collective: makes every file durable (fsync), then renames the finished archive to OUT. An
  // existing OUT (--force) is exchanged with it atomically where the file system can, else moved
  // aside first and put back if the rename fails; the old archive is removed only once the new one
  // is in place.
  void commit(const Options& o);

private:
  void remove();
  std::string dir_;
  std::string name_ = "traces";
  MPI_Comm comm_ = MPI_COMM_NULL;
};
TempOutput prepare_output(const Options& o, MPI_Comm comm);

class Otf2Collectives;

class ArchiveReader {
public:
  // Collective. Throws an agreed Error if the anchor file cannot be read.
  ArchiveReader(const std::string& anchor, MPI_Comm comm);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;
  OTF2_Reader* get() const { return reader_.get(); }
  // The input's chunk sizes; the output keeps them, so event files can be copied chunk by chunk.
  uint64_t event_chunk_size() const { return event_chunk_; }
  uint64_t def_chunk_size() const { return def_chunk_; }
  // Where the event files can be read directly (event_file.h); empty if they cannot.
  const std::string& event_dir() const { return event_dir_; }
  // Selects the locations of `processes` and reads their local definitions. A location's local
  // definition file (its id mappings) must be there, and not empty, unless the archive has none
  // at all (see correct/README.md).
  void open_locations(const Definitions& defs, const std::vector<uint32_t>& processes);
  // After open_locations: whether a location's events may be decoded straight from its event
  // file (event_decoder.h). Not if its local definitions hold mapping tables or clock offsets
  // (OTF2's reader applies them), nor for archives that are not uncompressed POSIX ones or are
  // of a newer OTF2 format than this library's (their records may be laid out differently).
  bool decodable(OTF2_LocationRef location) const;
  // After the write: a copy that turns out impossible reads its location again.
  void close_events();

private:
  struct Close {
    void operator()(OTF2_Reader* r) const;
  };
  // Declared first: OTF2 calls the collectives until the reader is closed.
  std::unique_ptr<Otf2Collectives> collectives_;
  std::unique_ptr<OTF2_Reader, Close> reader_;
  std::string anchor_;
  bool evt_open_ = false;
  bool local_defs_required_ = false;
  uint64_t event_chunk_ = 0, def_chunk_ = 0;
  std::string event_dir_;
  bool known_format_ = false;
  std::unordered_set<OTF2_LocationRef> rewritten_by_definitions_; // mapping tables, clock offsets
};

// Writes every owned location's records with the timestamps `times` produces, then (rank 0) the
// global definitions and the archive `properties`. The reader's event files must still be open.
// Every write, flush and close is checked: a failure is an agreed Output error naming the file.
void write_corrected(ArchiveReader& reader, const Definitions& defs,
                     const std::map<std::string, std::string>& properties, const LocalModel& model,
                     TimeSource& times, const TempOutput& out, MPI_Comm comm, Report& report);

} // namespace htrace::correct
#endif
