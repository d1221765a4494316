#include "correct/archive_reader.h"

#include "correct/exchange.h"
#include "format/anchor_file.h"
#include "format/otf2_library.h"
#include "otf2_mpi_collectives.h"

#include <filesystem>
#include <string>
#include <system_error>

namespace fs = std::filesystem;

namespace htrace::correct {

void ArchiveReader::Close::operator()(OTF2_Reader* r) const {
  if (may_clean_up_together()) OTF2_Reader_Close(r);
}

ArchiveReader::ArchiveReader(const std::string& anchor, RankGroup& ranks) : anchor_(anchor) {
  collectives_ = otf2_collectives(ranks);
  const std::string damage = format::anchor_file_damage(anchor);
  check_together(ranks,
                 damage.empty() ? "" : "'" + anchor + "': not an OTF2 archive (" + damage + ")");
  reader_.reset(OTF2_Reader_Open(anchor.c_str()));
  int64_t ok = reader_ ? 1 : 0;
  ranks.allreduce_min(&ok, 1);
  if (!ok) {
    reader_.reset();
    fail_together(ranks, "'" + anchor + "': cannot open as an OTF2 archive");
  }
  // OTF2 reads the anchor file here (rank 0, then broadcast): a damaged one fails now.
  const OTF2_ErrorCode rc = collectives_ ? collectives_->attach(reader_.get())
                                         : OTF2_Reader_SetSerialCollectiveCallbacks(reader_.get());
  check_together(ranks, rc == OTF2_SUCCESS ? ""
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
// Local definitions that change what OTF2's reader passes for a location's events: mapping
// tables, which the decoder applies too, and clock offsets, which it does not.
struct LocalDefinitions {
  format::IdMaps maps;
  bool retimed = false; // clock offsets, or mapping tables the decoder does not take
};
OTF2_CallbackCode note_mapping_table(void* u, OTF2_MappingType type, const OTF2_IdMap* map) {
  auto* d = static_cast<LocalDefinitions*>(u);
  if (!d->maps.set(type, map)) d->retimed = true;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode note_clock_offset(void* u, OTF2_TimeStamp, int64_t, double) {
  static_cast<LocalDefinitions*>(u)->retimed = true;
  return OTF2_CALLBACK_SUCCESS;
}
} // namespace

bool ArchiveReader::decodable(OTF2_LocationRef location) const {
  return !event_dir_.empty() && known_format_ && rewritten_by_definitions_.count(location) == 0;
}

const format::IdMaps* ArchiveReader::id_maps(OTF2_LocationRef location) const {
  auto it = id_maps_.find(location);
  return it == id_maps_.end() ? nullptr : &it->second;
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
      LocalDefinitions local;
      OTF2_Reader_RegisterDefCallbacks(reader, dr, cbs.get(), &local);
      uint64_t n = 0;
      OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
      OTF2_Reader_CloseDefReader(reader, dr);
      if (rc != OTF2_SUCCESS)
        failed = where + ": corrupt local definition file (" + format::otf2_cause(rc) + ")";
      if (local.retimed)
        rewritten_by_definitions_.insert(id);
      else if (!local.maps.empty())
        id_maps_.emplace(id, std::move(local.maps));
    }
  if (defs_open) OTF2_Reader_CloseDefFiles(reader);
  if (!failed.empty()) throw input_error(failed);
}

void ArchiveReader::close_events() {
  if (evt_open_) OTF2_Reader_CloseEvtFiles(reader_.get());
  evt_open_ = false;
}

} // namespace htrace::correct
