#include "wait_states_json.h"

#include "json_text.h"

#include <algorithm>
#include <vector>

namespace htrace::report {
namespace {

template <class Name>
void named_split(std::ostream& o, const std::map<std::uint32_t, std::int64_t>& split,
                 const char* key, Name name) {
  std::vector<std::pair<std::uint32_t, std::int64_t>> rows(split.begin(), split.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  o << '[';
  for (std::size_t i = 0; i < rows.size(); ++i)
    o << (i ? "," : "") << "{\"" << key << "\":" << json_string(name(rows[i].first))
      << ",\"ns\":" << rows[i].second << '}';
  o << ']';
}

void by_location(std::ostream& o, const std::vector<std::int64_t>& v) {
  o << '[';
  for (std::size_t i = 0; i < v.size(); ++i)
    o << (i ? "," : "") << v[i];
  o << ']';
}

} // namespace

void write_wait_states(std::ostream& o, const ArchiveDefs& defs,
                       const analysis::WaitStates& waits) {
  auto region = [&](std::uint32_t r) {
    auto it = defs.regions.find(r);
    return it == defs.regions.end() ? "region " + std::to_string(r) : it->second.name;
  };
  auto comm = [&](std::uint32_t c) {
    auto it = defs.comms.find(c);
    return it == defs.comms.end() ? "comm " + std::to_string(c) : it->second.name;
  };
  o << '{';
  for (std::size_t i = 0; i < analysis::kWaitPatterns; ++i) {
    const auto p = static_cast<analysis::WaitPattern>(i);
    const analysis::PatternTime& t = waits[p];
    o << (i ? "," : "") << '"' << analysis::pattern_key(p)
      << "\":{\"name\":" << json_string(analysis::pattern_name(p)) << ",\"total_ns\":" << t.total_ns
      << ",\"calls\":" << t.calls << ",\"longest_ns\":" << t.longest_ns << ",\"by_location\":";
    by_location(o, t.by_location);
    o << ",\"caused_by\":";
    by_location(o, t.caused_by);
    o << ",\"by_region\":";
    named_split(o, t.by_region, "region", region);
    o << ",\"by_comm\":";
    named_split(o, t.by_comm, "comm", comm);
    o << '}';
  }
  o << '}';
}

void write_json_report(std::ostream& o, const std::string& archive, std::uint64_t events,
                       const ArchiveDefs& defs, const analysis::WaitStates& waits) {
  o << "{\"archive\":" << json_string(archive) << ",\"events\":" << events
    << ",\"time_unit\":\"ns\",\"locations\":[";
  for (std::size_t i = 0; i < defs.locations.size(); ++i) {
    const Location& l = defs.locations[i];
    const Process& p = defs.processes[l.process];
    o << (i ? "," : "") << "{\"name\":" << json_string(l.name)
      << ",\"process\":" << json_string(p.name) << ",\"group\":" << p.group_id << '}';
  }
  o << "],\"wait_states\":";
  write_wait_states(o, defs, waits);
  o << "}\n";
}

} // namespace htrace::report
