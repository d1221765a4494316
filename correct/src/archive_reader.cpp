#include "correct/archive_reader.h"

#include "correct/exchange.h"
#include "format/anchor_file.h"
#include "format/otf2_library.h"
#include "otf2_mpi_collectives.h"

#include <string>

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
  layout_ = format::read_event_file_layout(reader_.get(), anchor);
}

bool ArchiveReader::decodable(OTF2_LocationRef location) const {
  return layout_.decodable() && rewritten_by_definitions_.count(location) == 0;
}

const format::IdMaps* ArchiveReader::id_maps(OTF2_LocationRef location) const {
  auto it = id_maps_.find(location);
  return it == id_maps_.end() ? nullptr : &it->second;
}

std::optional<std::string_view>
ArchiveReader::local_definition_file(uint32_t location_index) const {
  if (location_index >= local_def_spans_.size()) return std::nullopt;
  const auto [offset, size] = local_def_spans_[location_index];
  if (size == std::string::npos) return std::nullopt;
  return std::string_view(local_def_bytes_).substr(offset, size);
}

ArchiveReader::~ArchiveReader() {
  if (reader_ && evt_open_ && may_clean_up_together()) OTF2_Reader_CloseEvtFiles(reader_.get());
}

void ArchiveReader::open_locations(const Definitions& defs,
                                   const std::vector<uint32_t>& processes) {
  OTF2_Reader* reader = reader_.get();
  // OTF2 selects a POSIX archive's locations as its readers open them (selecting each one searches
  // the list of those selected: quadratic), any other archive's must be selected first.
  if (layout_.event_dir.empty())
    for (uint32_t p : processes)
      for (uint32_t li : defs.processes[p].locations)
        OTF2_Reader_SelectLocation(reader, defs.locations[li].id);
  // Local definitions carry the mapping tables and clock offsets the reader applies to events.
  // (Opening the definition and event files is collective in OTF2: errors are raised after both.)
  std::string failed;
  local_def_spans_.assign(defs.locations.size(), {0, std::string::npos});
  {
    format::LocalDefinitionReader local_defs(reader, layout_);
    const OTF2_ErrorCode evt_rc = OTF2_Reader_OpenEvtFiles(reader);
    evt_open_ = evt_rc == OTF2_SUCCESS;
    if (!evt_open_)
      failed =
          "'" + anchor_ + "': cannot open the event files (" + format::otf2_cause(evt_rc) + ")";
    for (uint32_t p : processes)
      for (uint32_t li : defs.processes[p].locations) {
        if (!failed.empty()) break;
        const OTF2_LocationRef id = defs.locations[li].id;
        format::LocalDefinitions local = local_defs.read(id, defs.locations[li].name);
        failed = local.error;
        if (!local.file.empty() &&
            local_def_bytes_.size() + local.file.size() <= kKeptLocalDefinitionBytes) {
          local_def_spans_[li] = {local_def_bytes_.size(), local.file.size()};
          local_def_bytes_.append(local.file);
        }
        if (local.retimed)
          rewritten_by_definitions_.insert(id);
        else if (!local.maps.empty())
          id_maps_.emplace(id, std::move(local.maps));
      }
  }
  if (!failed.empty()) throw input_error(failed);
}

void ArchiveReader::close_events() {
  if (evt_open_) OTF2_Reader_CloseEvtFiles(reader_.get());
  evt_open_ = false;
}

} // namespace htrace::correct
