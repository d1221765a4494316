#include "archive_defs.h"

#include "format/anchor_file.h"
#include "format/otf2_library.h"

#include <otf2/otf2.h>
#include <stdexcept>
#include <sys/stat.h>

namespace htrace::report {

ArchiveDefs make_archive_defs(const format::GlobalDefs& g) {
  ArchiveDefs d;
  if (g.clock.defined) {
    d.resolution = g.clock.resolution ? g.clock.resolution : 1;
    d.global_offset = g.clock.global_offset;
    d.trace_length = g.clock.trace_length;
    d.realtime_ns = g.clock.realtime == OTF2_UNDEFINED_TIMESTAMP ? 0 : g.clock.realtime;
  }
  std::map<std::uint64_t, std::uint32_t> process_index; // group id -> index
  for (const format::LocationGroupDef& lg : g.location_groups) {
    process_index[lg.id] = static_cast<std::uint32_t>(d.processes.size());
    d.processes.push_back({lg.id, lg.name, g.host(lg.parent), {}});
  }
  for (const format::LocationDef& l : g.locations) {
    auto it = process_index.find(l.group);
    if (it == process_index.end()) { // a location without a known group gets its own process
      it = process_index.emplace(l.group, static_cast<std::uint32_t>(d.processes.size())).first;
      d.processes.push_back({l.group, "process " + std::to_string(l.group), "", {}});
    }
    const auto li = static_cast<std::uint32_t>(d.locations.size());
    d.location_index[l.id] = li;
    d.locations.push_back({l.id, l.name, it->second, l.events, {}});
    d.processes[it->second].locations.push_back(li);
  }
  for (const format::LocationPropertyDef& p : g.location_properties) {
    auto it = d.location_index.find(p.location);
    const std::optional<std::int64_t> v = p.integer(false); // only integers are reported
    if (it != d.location_index.end() && v) d.locations[it->second].properties[p.name] = *v;
  }
  for (const auto& [ref, region] : g.regions)
    d.regions[ref] = region;
  for (const auto& [ref, comm] : g.comms) {
    Comm& c = d.comms[ref];
    c.name = comm.name;
    c.self = comm.group_type == OTF2_GROUP_TYPE_COMM_SELF;
    for (OTF2_LocationRef member : comm.members) {
      auto li = d.location_index.find(member);
      if (li != d.location_index.end()) c.members.push_back(li->second);
    }
  }
  d.properties = g.archive_properties;
  d.creator = g.creator;
  return d;
}

std::uint64_t ArchiveDefs::total_events() const {
  std::uint64_t n = 0;
  for (const auto& l : locations)
    n += l.events;
  return n;
}

long ArchiveDefs::member(std::uint32_t comm, std::uint32_t rank) const {
  auto it = comms.find(comm);
  if (it == comms.end() || rank >= it->second.members.size()) return -1;
  return it->second.members[rank];
}

void check_read(OTF2_ErrorCode rc, const std::string& what) {
  if (rc != OTF2_SUCCESS) throw input_error(what + " failed (" + format::otf2_cause(rc) + ")");
}

void check_write(OTF2_ErrorCode rc, const std::string& what) {
  if (rc != OTF2_SUCCESS) throw output_error(what + " failed (" + format::otf2_cause(rc) + ")");
}

OTF2_Reader* open_reader(const std::string& archive) {
  const std::string anchor = format::find_anchor(archive);
  const std::string damage = format::anchor_file_damage(anchor);
  if (!damage.empty()) throw input_error("'" + anchor + "': not an OTF2 archive (" + damage + ")");
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) throw input_error("'" + archive + "': not a readable OTF2 archive");
  return reader;
}

ArchiveDefs read_definitions(const std::string& archive) {
  const format::ReaderPtr owned(open_reader(archive));
  OTF2_Reader* reader = owned.get();
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "'" + archive + "': serial reading");
  ArchiveDefs defs;
  try {
    defs = make_archive_defs(format::read_global_defs(reader));
  } catch (const format::GlobalDefsError& e) {
    using Stage = format::GlobalDefsError::Stage;
    if (e.stage == Stage::Open) throw input_error("'" + archive + "': no global definitions");
    throw input_error("'" + archive + "': " +
                      (e.stage == Stage::Register ? "registering definition callbacks"
                                                  : "reading the global definitions") +
                      " failed (" + e.cause + ")");
  }
  if (defs.locations.empty()) throw input_error("'" + archive + "': no locations defined");
  return defs;
}

} // namespace htrace::report
