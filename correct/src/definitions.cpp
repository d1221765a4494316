#include "correct/definitions.h"

#include "htrace/archive_properties.h"

#include <cstdlib>
#include <stdexcept>
#include <unordered_set>

namespace htrace::correct {
namespace {

void add_processes(const format::GlobalDefs& g, Definitions& d) {
  // By id; a later definition of the same id replaces an earlier one.
  std::map<OTF2_LocationGroupRef, const format::LocationGroupDef*> groups;
  for (const format::LocationGroupDef& lg : g.location_groups)
    groups[lg.id] = &lg;
  std::map<OTF2_LocationRef, const format::LocationDef*> locations;
  for (const format::LocationDef& l : g.locations)
    locations[l.id] = &l;
  // Processes: the location groups that own locations, and a process for every group a location
  // names without defining it.
  std::map<OTF2_LocationGroupRef, uint32_t> process_index;
  std::unordered_set<OTF2_LocationGroupRef> used;
  for (const auto& [id, l] : locations)
    used.insert(l->group);
  for (const auto& [id, lg] : groups)
    if (used.count(id)) {
      process_index[id] = static_cast<uint32_t>(d.processes.size());
      d.processes.push_back({id, g.compute_node(lg->parent), {}, 0});
    }
  for (const auto& [id, l] : locations) {
    auto it = process_index.find(l->group);
    if (it == process_index.end()) {
      it = process_index.emplace(l->group, static_cast<uint32_t>(d.processes.size())).first;
      d.processes.push_back({l->group, 0, {}, 0});
    }
    LocationInfo li;
    li.id = id;
    li.process = it->second;
    li.declared_events = l->events;
    li.name = l->name;
    d.location_index[id] = static_cast<uint32_t>(d.locations.size());
    d.processes[li.process].locations.push_back(static_cast<uint32_t>(d.locations.size()));
    d.processes[li.process].events += l->events;
    d.locations.push_back(li);
  }
}

/// "HTRACE::CLOCK::MID_<k>_<FIELD>": stores the value in the k-th measurement during the run
/// (k from 1, at most kMaxDuring); false for any other name.
bool add_measurement_during_run(const std::string& name, int64_t v,
                                std::map<long, ClockMeasurement>& during) {
  constexpr long kMaxDuring = 1'000'000;
  const std::string prefix = HTRACE_LPROP_MID_PREFIX;
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  char* end = nullptr;
  const long k = std::strtol(name.c_str() + prefix.size(), &end, 10);
  if (end == name.c_str() + prefix.size() || k < 1 || k > kMaxDuring) return false;
  const std::string field = end;
  if (field == "_TIME")
    during[k].time = v;
  else if (field == "_OFFSET")
    during[k].offset = v;
  else if (field == "_UNCERTAINTY")
    during[k].uncertainty = v;
  else
    return false;
  return true;
}

void add_clock_measurements(const format::GlobalDefs& g, Definitions& d) {
  std::map<uint32_t, std::map<long, ClockMeasurement>> during; // by location index, then k
  for (const format::LocationPropertyDef& p : g.location_properties) {
    auto it = d.location_index.find(p.location);
    if (it == d.location_index.end()) continue;
    LocationInfo& li = d.locations[it->second];
    const int64_t v = p.integer(true).value_or(0);
    const std::string& name = p.name;
    if (add_measurement_during_run(name, v, during[it->second])) continue;
    if (name == HTRACE_LPROP_INIT_TIME)
      li.init_time = v, li.has_init = true;
    else if (name == HTRACE_LPROP_INIT_OFFSET)
      li.init_offset = v;
    else if (name == HTRACE_LPROP_FINAL_TIME)
      li.final_time = v, li.has_final = true;
    else if (name == HTRACE_LPROP_FINAL_OFFSET)
      li.final_offset = v;
    else if (name == HTRACE_LPROP_INIT_UNCERTAINTY)
      li.init_uncertainty = v;
    else if (name == HTRACE_LPROP_FINAL_UNCERTAINTY)
      li.final_uncertainty = v;
    else if (name == HTRACE_LPROP_CLOCK_DOMAIN && v >= 0)
      li.clock_domain = v;
  }
  for (auto& [index, measurements] : during)
    for (const auto& [k, m] : measurements)
      d.locations[index].during.push_back(m);
  // A process is in a domain when all its locations say so (htrace writes the same on each).
  for (ProcessInfo& p : d.processes) {
    int64_t domain = LocationInfo::kNoClockDomain;
    for (size_t k = 0; k < p.locations.size(); ++k) {
      const int64_t v = d.locations[p.locations[k]].clock_domain;
      if (k == 0) domain = v;
      if (v != domain) domain = LocationInfo::kNoClockDomain;
    }
    p.clock_domain = domain;
  }
}

} // namespace

uint32_t Definitions::process_of_location(OTF2_LocationRef loc) const {
  auto it = location_index.find(loc);
  return it == location_index.end() ? UINT32_MAX : locations[it->second].process;
}

Definitions make_definitions(const format::GlobalDefs& g) {
  Definitions d;
  add_processes(g, d);
  for (const auto& [id, comm] : g.comms) {
    if (!comm.has_group) continue;
    CommInfo ci;
    ci.paradigm = comm.paradigm;
    for (OTF2_LocationRef member : comm.members) {
      const uint32_t p = d.process_of_location(member);
      ci.process_rank.emplace(p, static_cast<uint32_t>(ci.rank_process.size()));
      ci.rank_process.push_back(p);
    }
    d.comms[id] = std::move(ci);
  }
  // Regions are looked up for every Enter and Leave, so by index: references are indices in every
  // writer we know; a sparse outlier is ignored rather than allocated for (its region then counts
  // as an ordinary function).
  for (const auto& [ref, region] : g.regions)
    if (ref < (1u << 24)) {
      if (ref >= d.regions.size()) d.regions.resize(ref + 1);
      d.regions[ref] = region.cls;
    }
  add_clock_measurements(g, d);
  d.archive_properties = g.archive_properties;
  d.has_clock_properties = g.clock.defined;
  if (g.clock.defined) {
    d.timer_resolution = g.clock.resolution;
    d.global_offset = g.clock.global_offset;
    d.trace_length = g.clock.trace_length;
  }
  return d;
}

Definitions read_definitions(OTF2_Reader* reader) {
  format::GlobalDefs g;
  try {
    g = format::read_global_defs(reader);
  } catch (const format::GlobalDefsError& e) {
    if (e.stage == format::GlobalDefsError::Stage::Open)
      throw std::runtime_error("cannot open the global definitions");
    throw std::runtime_error(std::string("corrupt global definitions: ") +
                             OTF2_Error_GetDescription(e.rc));
  }
  Definitions d = make_definitions(g);
  if (d.locations.empty()) throw std::runtime_error("the archive defines no locations");
  return d;
}

} // namespace htrace::correct
