// Opening the input archive, the atomic output directory, and the rewrite that copies every record
// with its corrected timestamp. Errors are agreed collectively so no rank hangs when another fails.
#ifndef HTRACE_CORRECT_ARCHIVE_IO_H
#define HTRACE_CORRECT_ARCHIVE_IO_H

#include "correct/definitions.h"
#include "correct/model_reader.h"
#include "correct/options.h"
#include "correct/report.h"
#include "correct/time_source.h"

#include <functional>
#include <map>
#include <mpi.h>
#include <otf2/otf2.h>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace htrace::correct {

/// Flush callbacks for writing archives: always flush a full buffer, no flush timestamps (the
/// writers here produce complete archives, not live traces). OTF2 drops events without them.
extern const OTF2_FlushCallbacks kFlushAlways;

// Runs fn on every rank; if it throws anywhere, every rank throws the lowest failing rank's
// message.
std::string agree(MPI_Comm comm, const std::function<std::string()>& fn);
template <class F> auto agree_value(MPI_Comm comm, F fn) -> decltype(fn()) {
  decltype(fn()) value{};
  agree(comm, [&] {
    value = fn();
    return std::string();
  });
  return value;
}

// IN may be the archive directory or its .otf2 anchor file; returns the anchor path.
std::string find_anchor(const std::string& input);

struct TempOutput {
  std::string dir; // temporary archive directory next to OUT
  std::string name = "traces";
};
TempOutput prepare_output(const Options& o, MPI_Comm comm);
void commit_output(const TempOutput& out, const Options& o, MPI_Comm comm);

class ArchiveReader {
public:
  ArchiveReader(const std::string& anchor, MPI_Comm comm);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;
  OTF2_Reader* get() const { return reader_; }
  // The input's chunk sizes; the output keeps them, so event files can be copied chunk by chunk.
  uint64_t event_chunk_size() const { return event_chunk_; }
  uint64_t def_chunk_size() const { return def_chunk_; }
  // Where the event files can be read directly (event_file.h); empty if they cannot.
  const std::string& event_dir() const { return event_dir_; }
  // Selects the locations of `processes` and reads their local definitions.
  void open_locations(const Definitions& defs, const std::vector<uint32_t>& processes);
  // After open_locations: whether a location's events may be decoded straight from its event
  // file (event_decoder.h). Not if its local definitions hold mapping tables or clock offsets
  // (OTF2's reader applies them), nor for archives that are not uncompressed POSIX ones or are
  // of a newer OTF2 format than this library's (their records may be laid out differently).
  bool decodable(OTF2_LocationRef location) const;
  // After the write: a copy that turns out impossible reads its location again.
  void close_events();

private:
  OTF2_Reader* reader_ = nullptr;
  bool evt_open_ = false;
  uint64_t event_chunk_ = 0, def_chunk_ = 0;
  std::string event_dir_;
  bool known_format_ = false;
  std::unordered_set<OTF2_LocationRef> rewritten_by_definitions_; // mapping tables, clock offsets
};

// Writes every owned location's records with the timestamps `times` produces, then (rank 0) the
// global definitions and the archive `properties`. The reader's event files must still be open.
void write_corrected(ArchiveReader& reader, const Definitions& defs,
                     const std::map<std::string, std::string>& properties, const LocalModel& model,
                     TimeSource& times, const TempOutput& out, MPI_Comm comm, Report& report);

} // namespace htrace::correct
#endif
