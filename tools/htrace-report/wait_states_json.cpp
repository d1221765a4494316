#include "wait_states_json.h"

#include "json_text.h"
#include "rank_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

void by_location(std::ostream& o, const std::vector<std::int64_t>& v, const PerLocation& per) {
  if (!per.top) {
    o << '[';
    for (std::size_t i = 0; i < v.size(); ++i)
      o << (i ? "," : "") << v[i];
    o << ']';
    return;
  }
  std::vector<std::uint32_t> order = largest(v, per.top);
  order.resize(std::min(order.size(), per.top));
  o << '{';
  bool first = true;
  for (std::uint32_t i : order) {
    if (v[i] <= 0) break;
    o << (first ? "" : ",") << '"' << i << "\":" << v[i];
    first = false;
    if (per.referenced) per.referenced->insert(i);
  }
  o << '}';
}

void efficiency(std::ostream& o, const analysis::Efficiency& e, const PerLocation& per,
                const std::string* from = nullptr) {
  o << "{\"begin_ns\":" << e.window.begin_ns << ",\"end_ns\":" << e.window.end_ns
    << ",\"runtime_ns\":" << e.runtime_ns << ",\"ideal_runtime_ns\":" << e.ideal_runtime_ns
    << ",\"max_useful_ns\":" << e.max_useful_ns << ",\"avg_useful_ns\":";
  write_number(o, e.avg_useful_ns);
  o << ",\"ranks\":" << e.ranks;
  for (const auto& [key, value] : efficiency_metrics(e)) {
    o << ",\"" << key << "\":";
    write_number(o, value);
  }
  o << ",\"locations\":[";
  for (std::size_t i = 0; i < (per.top ? 0 : e.locations.size()); ++i) {
    const analysis::LocationTimes& l = e.locations[i];
    o << (i ? "," : "") << "{\"rank\":" << (l.calls_mpi ? "true" : "false")
      << ",\"useful_ns\":" << l.useful_ns << ",\"mpi_ns\":" << l.mpi_ns
      << ",\"waiting_ns\":" << l.waiting_ns << '}';
  }
  o << ']';
  if (from) o << ",\"from\":" << json_string(*from);
  o << '}';
}

} // namespace

void write_number(std::ostream& o, double v) {
  if (!std::isfinite(v)) {
    o << "null";
    return;
  }
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  o << buf;
}

void write_wait_states(std::ostream& o, const ArchiveDefs& defs, const analysis::WaitStates& waits,
                       const PerLocation& per) {
  auto region = [&](std::uint32_t r) { return region_name(defs, r); };
  auto comm = [&](std::uint32_t c) { return comm_name(defs, c); };
  o << '{';
  for (std::size_t i = 0; i < analysis::kWaitPatterns; ++i) {
    const auto p = static_cast<analysis::WaitPattern>(i);
    const analysis::PatternTime& t = waits[p];
    o << (i ? "," : "") << '"' << analysis::pattern_key(p)
      << "\":{\"name\":" << json_string(analysis::pattern_name(p)) << ",\"total_ns\":" << t.total_ns
      << ",\"calls\":" << t.calls << ",\"longest_ns\":" << t.longest_ns << ",\"by_location\":";
    by_location(o, t.by_location, per);
    o << ",\"caused_by\":";
    by_location(o, t.caused_by, per);
    o << ",\"by_region\":";
    named_split(o, t.by_region, "region", region);
    o << ",\"by_comm\":";
    named_split(o, t.by_comm, "comm", comm);
    o << '}';
  }
  o << '}';
}

void write_efficiency(std::ostream& o, const RunAnalysis& a, const PerLocation& per) {
  o << "{\"run\":";
  efficiency(o, a.efficiency.run, per);
  o << ",\"window\":";
  if (a.efficiency.window) {
    efficiency(o, *a.efficiency.window, per, &a.window_from);
  } else {
    o << "null";
  }
  o << '}';
}

void write_comparison(std::ostream& o, const Comparison& c, const PerLocation& per) {
  o << "{\"headline\":[";
  for (std::size_t i = 0; i < c.headline.size(); ++i) {
    const HeadlineFigure& h = c.headline[i];
    o << (i ? "," : "") << "{\"figure\":" << json_string(h.figure)
      << ",\"scope\":" << json_string(h.scope) << ",\"before\":";
    write_number(o, h.before);
    o << ",\"after\":";
    write_number(o, h.after);
    o << ",\"material\":" << (h.material ? "true" : "false") << '}';
  }
  const std::size_t shown = per.top ? std::min(c.waits.size(), 10 * per.top) : c.waits.size();
  o << ']';
  if (per.top) o << ",\"wait_states_total\":" << c.waits.size();
  o << ",\"wait_states\":[";
  for (std::size_t i = 0; i < shown; ++i) {
    const WaitChange& w = c.waits[i];
    if (per.referenced && (w.split == "by_location" || w.split == "caused_by"))
      per.referenced->insert(static_cast<std::uint32_t>(std::stoul(w.item)));
    o << (i ? "," : "") << "{\"pattern\":" << json_string(w.pattern)
      << ",\"split\":" << json_string(w.split) << ",\"item\":" << json_string(w.item)
      << ",\"before_ns\":" << w.before << ",\"after_ns\":" << w.after
      << ",\"change\":" << json_string(w.change) << '}';
  }
  o << "]}";
}

void write_json_report(std::ostream& o, const std::string& archive, std::uint64_t events,
                       const ArchiveDefs& defs, const RunAnalysis& a,
                       const BeforeAnalysis* before) {
  o << "{\"archive\":" << json_string(archive) << ",\"events\":" << events
    << ",\"time_unit\":\"ns\",\"locations\":[";
  for (std::size_t i = 0; i < defs.locations.size(); ++i) {
    const Location& l = defs.locations[i];
    const Process& p = defs.processes[l.process];
    o << (i ? "," : "") << "{\"name\":" << json_string(l.name)
      << ",\"process\":" << json_string(p.name) << ",\"group\":" << p.group_id << '}';
  }
  o << "],\"wait_states\":";
  write_wait_states(o, defs, a.waits);
  o << ",\"efficiency\":";
  write_efficiency(o, a);
  if (before) {
    o << ",\"before\":{\"archive\":" << json_string(before->archive) << ",\"wait_states\":";
    write_wait_states(o, *before->defs, before->analysis->waits);
    o << ",\"efficiency\":";
    write_efficiency(o, *before->analysis);
    o << "},\"comparison\":";
    write_comparison(o, *before->comparison);
  }
  o << "}\n";
}

} // namespace htrace::report
