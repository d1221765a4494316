#include "archive_score.h"

#include "format/anchor_file.h"
#include "format/error.h"
#include "format/event_file.h"
#include "format/global_defs.h"
#include "format/local_definitions.h"
#include "format/otf2_library.h"
#include "location_scan.h"

#include <htrace/archive_properties.h>
#include <map>
#include <sys/stat.h>

namespace htrace::score {
namespace {

// Bytes of a Region definition record and its name's String record beyond the name itself
// (record headers, references, role, paradigm, flags, lines), as OTF2 encodes them: an estimate.
constexpr std::uint64_t kRegionRecordBytes = 22;

// The family of a region that is no MPI function of the table: its paradigm.
std::string paradigm_family(OTF2_Paradigm paradigm) {
  switch (paradigm) {
  case OTF2_PARADIGM_MPI:
    return "mpi (other)";
  case OTF2_PARADIGM_OPENMP:
    return "openmp";
  case OTF2_PARADIGM_USER:
    return "user";
  case OTF2_PARADIGM_COMPILER:
    return "compiler";
  case OTF2_PARADIGM_PTHREAD:
    return "pthread";
  case OTF2_PARADIGM_MEASUREMENT_SYSTEM:
    return "measurement";
  case OTF2_PARADIGM_CUDA:
    return "cuda";
  case OTF2_PARADIGM_SHMEM:
    return "shmem";
  default:
    return "other";
  }
}

RegionRow region_row(const format::RegionDef& r) {
  RegionRow row;
  row.name = r.name;
  row.mpi = find_mpi_function(r.name);
  row.family = row.mpi ? row.mpi->family : paradigm_family(r.cls.paradigm);
  if (r.name == "MPI_Init" || r.name == "MPI_Init_thread")
    row.lifecycle = RegionRow::Lifecycle::Init;
  else if (r.name == "MPI_Finalize")
    row.lifecycle = RegionRow::Lifecycle::Finalize;
  return row;
}

RegionRow pseudo_row(const char* name) {
  RegionRow row;
  row.name = name;
  row.family = "";
  return row;
}

format::GlobalDefs read_definitions(OTF2_Reader* reader, const std::string& archive) {
  try {
    return format::read_global_defs(reader);
  } catch (const format::GlobalDefsError& e) {
    using Stage = format::GlobalDefsError::Stage;
    if (e.stage == Stage::Open) throw input_error("'" + archive + "': no global definitions");
    throw input_error("'" + archive + "': " +
                      (e.stage == Stage::Register ? "registering definition callbacks"
                                                  : "reading the global definitions") +
                      " failed (" + e.cause + ")");
  }
}

// Regions of one name (several definitions, or the same name in two paradigms) are one row: the
// name is what HTRACE_MPI_EXCLUDE and filter files select.
void merge_rows_by_name(std::vector<RegionRow>& rows) {
  std::map<std::string, std::size_t> first;
  std::vector<RegionRow> merged;
  merged.reserve(rows.size());
  for (RegionRow& r : rows) {
    auto [it, added] = first.emplace(r.name, merged.size());
    if (added) {
      merged.push_back(std::move(r));
      continue;
    }
    RegionRow& m = merged[it->second];
    m.calls += r.calls;
    m.records += r.records;
    m.bytes += r.bytes;
    m.removable_calls += r.removable_calls;
    m.removable_records += r.removable_records;
    m.removable_bytes += r.removable_bytes;
    m.follow_on_records += r.follow_on_records;
    m.follow_on_bytes += r.follow_on_bytes;
  }
  rows = std::move(merged);
}

// One row per region (definition order), then the rows of events outside any region and of
// undefined regions; their refs in row order, and the region definitions' estimated bytes.
std::vector<OTF2_RegionRef> add_region_rows(const format::GlobalDefs& defs, ArchiveScore& score) {
  std::vector<OTF2_RegionRef> refs;
  for (const auto& [ref, r] : defs.regions) {
    refs.push_back(ref);
    score.rows.push_back(region_row(r));
    score.region_definition_bytes += kRegionRecordBytes + r.name.size() + 1;
  }
  score.rows.push_back(pseudo_row("(outside any region)"));
  score.rows.push_back(pseudo_row("(undefined region)"));
  return refs;
}

// The ranks: the processes' location groups; a group another one created (Score-P's CUDA
// contexts) belongs to its creator's rank, since every rank of a larger run has one too; a group
// only a location names is a rank of its own. Location group -> index into `ranks`.
std::map<OTF2_LocationGroupRef, std::size_t> add_ranks(const format::GlobalDefs& defs,
                                                       std::vector<RankTally>& ranks) {
  std::map<OTF2_LocationGroupRef, std::size_t> rank_of;
  const auto add = [&](OTF2_LocationGroupRef group) {
    rank_of.emplace(group, ranks.size());
    ranks.push_back({});
    ranks.back().id = group;
  };
  for (const format::LocationGroupDef& g : defs.location_groups)
    if (g.creator == OTF2_UNDEFINED_LOCATION_GROUP || g.type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
      add(g.id);
  for (const format::LocationGroupDef& g : defs.location_groups) {
    if (rank_of.count(g.id)) continue;
    auto creator = rank_of.find(g.creator);
    if (creator != rank_of.end())
      rank_of.emplace(g.id, creator->second);
    else
      add(g.id);
  }
  for (const format::LocationDef& l : defs.locations)
    if (!rank_of.count(l.group)) add(l.group);
  return rank_of;
}

} // namespace

std::uint64_t ArchiveScore::records() const {
  std::uint64_t n = 0;
  for (const RegionRow& r : rows)
    n += r.records;
  return n;
}

std::uint64_t ArchiveScore::event_bytes() const {
  std::uint64_t n = 0;
  for (const RegionRow& r : rows)
    n += r.bytes;
  return n;
}

ArchiveScore score_archive(const std::string& archive) {
  const std::string anchor = format::find_anchor(archive);
  const std::string damage = format::anchor_file_damage(anchor);
  if (!damage.empty()) throw input_error("'" + anchor + "': not an OTF2 archive (" + damage + ")");
  const format::ReaderPtr owned(OTF2_Reader_Open(anchor.c_str()));
  OTF2_Reader* reader = owned.get();
  if (!reader) throw input_error("'" + archive + "': not a readable OTF2 archive");
  if (OTF2_Reader_SetSerialCollectiveCallbacks(reader) != OTF2_SUCCESS)
    throw input_error("'" + archive + "': serial reading failed");
  const format::GlobalDefs defs = read_definitions(reader, archive);
  if (defs.locations.empty()) throw input_error("'" + archive + "': no locations defined");
  const format::EventFileLayout layout = format::read_event_file_layout(reader, anchor);
  if (layout.event_dir.empty())
    throw input_error("'" + archive +
                      "': its event files are compressed or not in OTF2's POSIX layout; "
                      "htrace-score reads uncompressed POSIX event files only");
  if (!layout.known_format)
    throw input_error("'" + archive + "': written in a newer OTF2 format than this OTF2 library's");
  std::uint64_t event_chunk = 0, def_chunk = 0;
  OTF2_Reader_GetChunkSize(reader, &event_chunk, &def_chunk);

  ArchiveScore score;
  score.archive = archive;
  score.creator = defs.creator;
  if (defs.clock.defined && defs.clock.resolution > 0) score.resolution = defs.clock.resolution;
  score.files = measure_archive_files(anchor);
  score.locations = defs.locations.size();
  PollAttribute polls;
  for (const auto& [ref, a] : defs.attributes)
    if (a.name == HTRACE_ATTR_POLLS && a.type == OTF2_TYPE_UINT64) polls = {true, ref};
  score.polls_folded = polls.defined;
  const RowIndex index(add_region_rows(defs, score));
  const std::map<OTF2_LocationGroupRef, std::size_t> rank_of = add_ranks(defs, score.ranks);

  LocationScan scan(index, score.rows, polls);
  std::uint64_t scanned_bytes = 0;
  format::LocalDefinitionReader local_defs(reader, layout);
  // Only the mapping tables matter here: clock offsets move times by the clocks' offsets, and the
  // times serve only for the ranks' windows, their lengths.
  const std::vector<format::LocalDefinitions> locals =
      local_defs.read_all_of(defs.locations, format::Otf2Events::No);
  for (std::size_t i = 0; i < defs.locations.size(); ++i) {
    const format::LocationDef& l = defs.locations[i];
    const format::LocalDefinitions& local = locals[i];
    if (!local.error.empty()) throw input_error("'" + archive + "': " + local.error);
    if (format::empty_event_file_left_out(layout.event_dir, l.id, l.events)) continue;
    const std::string path = format::event_file_path(layout.event_dir, l.id);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      throw input_error("'" + path + "': missing event file of location " + std::to_string(l.id) +
                        " (" + l.name + ")");
    }
    format::MappedFile file(path, format::MappedFile::kSmallFile);
    scanned_bytes += file.size();
    if (file.size() == 0) continue;
    file.advise_sequential();
    scan.scan(file, static_cast<std::size_t>(event_chunk), l.id,
              local.maps.empty() ? nullptr : &local.maps, score.ranks[rank_of.at(l.group)], path);
  }
  score.mismatched_leaves = scan.mismatched_leaves();
  // Event files no defined location names: counted, so that the rows add up to the files.
  RegionRow strays = pseudo_row("(event files of undefined locations)");
  if (score.files.event_bytes > scanned_bytes)
    strays.bytes = score.files.event_bytes - scanned_bytes;
  score.rows.push_back(strays);
  merge_rows_by_name(score.rows);
  return score;
}

} // namespace htrace::score
