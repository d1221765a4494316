// The input archive, opened by every correction rank: OTF2's reader with MPI collectives (OTF2's
// serial ones for a single rank), the locations a rank owns, and where their event files can be
// read directly.
#ifndef HTRACE_CORRECT_ARCHIVE_READER_H
#define HTRACE_CORRECT_ARCHIVE_READER_H

#include "correct/definitions.h"
#include "correct/rank_group.h"
#include "format/event_decoder.h"
#include "format/local_definitions.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <otf2/otf2.h>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace htrace::correct {

class Otf2Collectives;

class ArchiveReader {
public:
  // Collective. Throws an agreed Error if the anchor file cannot be read.
  ArchiveReader(const std::string& anchor, RankGroup& ranks);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;
  OTF2_Reader* get() const { return reader_.get(); }
  // The input's chunk sizes; the output keeps them, so event files can be copied chunk by chunk.
  uint64_t event_chunk_size() const { return event_chunk_; }
  uint64_t def_chunk_size() const { return def_chunk_; }
  // Where the event files can be read directly (event_file.h); empty if they cannot.
  const std::string& event_dir() const { return layout_.event_dir; }
  // Selects the locations of `processes` and reads their local definitions. A location's local
  // definition file (its id mappings) must be there, and not empty, unless the archive has none
  // at all (see correct/README.md).
  void open_locations(const Definitions& defs, const std::vector<uint32_t>& processes);
  // After open_locations: whether a location's events may be decoded straight from its event
  // file (event_decoder.h). Not if its local definitions hold clock offsets (OTF2's reader
  // applies them), nor for archives that are not uncompressed POSIX ones or are of a newer OTF2
  // format than this library's (their records may be laid out differently).
  bool decodable(OTF2_LocationRef location) const;
  // The mapping tables of a decodable location's local definitions, for the decoder; null if
  // it has none.
  const format::IdMaps* id_maps(OTF2_LocationRef location) const;
  // The bytes of location `location_index`'s (into Definitions::locations) local definition file
  // as open_locations read them, or nullopt if it did not read them itself (OTF2's reader did, or
  // there is none): a copied event file's goes into the output unchanged.
  std::optional<std::string_view> local_definition_file(uint32_t location_index) const;
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
  uint64_t event_chunk_ = 0, def_chunk_ = 0;
  format::EventFileLayout layout_;
  std::unordered_set<OTF2_LocationRef> rewritten_by_definitions_; // clock offsets
  std::unordered_map<OTF2_LocationRef, format::IdMaps> id_maps_;
  // The local definition files read directly, one after the other, up to kKeptLocalDefinitionBytes
  // in all (htrace's and Score-P's hold a few dozen bytes each; beyond that they are copied from
  // the input), and where each one is, by location index ({0, npos}: not kept).
  static constexpr size_t kKeptLocalDefinitionBytes = size_t(64) << 20;
  std::string local_def_bytes_;
  std::vector<std::pair<size_t, size_t>> local_def_spans_;
};

} // namespace htrace::correct
#endif
