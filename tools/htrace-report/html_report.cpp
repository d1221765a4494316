#include "html_report.h"

#include "json_text.h"
#include "rank_summary.h"
#include "report_assets.h"
#include "wait_states_json.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace htrace::report {
namespace {

const char* kind_name(const ArchiveDefs& defs, std::uint32_t region) {
  auto r = defs.regions.find(region);
  if (r == defs.regions.end()) return "user";
  return r->second.cls.mpi() ? "MPI" : r->second.cls.openmp() ? "OpenMP" : "user";
}

std::string location_label(const ArchiveDefs& defs, std::uint32_t li) {
  const Location& l = defs.locations[li];
  const Process& p = defs.processes[l.process];
  return p.name + " / " + l.name;
}

std::string seconds(std::int64_t ns) {
  std::ostringstream s;
  s.precision(6);
  s << std::fixed << static_cast<double>(ns) / 1e9 << " s";
  return s.str();
}

std::string property(const ArchiveDefs& defs, const std::string& key, const std::string& fallback) {
  auto it = defs.properties.find(key);
  return it == defs.properties.end() ? fallback : it->second;
}

/// A location's integer property, or JSON null.
std::string prop_or_null(const Location& l, const std::string& key) {
  auto it = l.properties.find(key);
  return it == l.properties.end() ? "null" : std::to_string(it->second);
}

void summary(std::ostream& o, const ArchiveDefs& defs, const Profile& p, const HtmlInputs& in) {
  std::size_t threads = 0;
  for (const auto& proc : defs.processes)
    threads = std::max(threads, proc.locations.size());
  std::vector<std::pair<std::string, std::string>> rows = {
      {"archive", in.archive},
      {"creator", defs.creator.empty() ? "unknown" : defs.creator},
      {"ranks (processes)", std::to_string(defs.processes.size())},
      {"locations (threads)", std::to_string(defs.locations.size()) + " (at most " +
                                  std::to_string(threads) + " per rank)"},
      {"duration", seconds(p.seen_any ? p.last_ns - p.first_ns : 0)},
      {"events", std::to_string(in.events_read)},
      {"archive size", std::to_string(in.archive_bytes) + " bytes"},
      {"clock resolution", std::to_string(defs.resolution) + " ticks/s"},
      {"clock", property(defs, "HTRACE::CLOCK::BASE", "unknown")},
      {"time base", property(defs, "HTRACE::CLOCK::TIMEBASE", "unknown")},
      {"clock synchronization", property(defs, "HTRACE::CLOCK::SYNC", "unknown")},
      {"htrace version", property(defs, "HTRACE::VERSION", "unknown")}};
  if (defs.properties.count("HTRACE::CORRECT::VERSION"))
    rows.emplace_back("corrected by htrace-correct",
                      defs.properties.at("HTRACE::CORRECT::VERSION"));
  o << "\"summary\":{\"archive\":" << json_string(in.archive) << ",\"rows\":[";
  for (std::size_t i = 0; i < rows.size(); ++i)
    o << (i ? "," : "") << "[" << json_string(rows[i].first) << "," << json_string(rows[i].second)
      << "]";
  o << "]}";
}

/// Bins of the per-rank histograms on a summarized page.
constexpr std::size_t kHistogramBins = 20;

void profile(std::ostream& o, const ArchiveDefs& defs, const Profile& p) {
  // Region -> per-rank sums.
  const std::size_t np = defs.processes.size();
  const ReportScale& scale = p.scale;
  std::map<std::uint32_t, std::vector<RegionStats>> by_region;
  for (std::size_t li = 0; li < p.per_location.size(); ++li)
    for (const auto& [region, s] : p.per_location[li]) {
      auto& v = by_region[region];
      if (v.empty()) v.resize(np);
      RegionStats& r = v[defs.locations[li].process];
      r.calls += s.calls;
      r.time_ns += s.time_ns;
      r.bytes_sent += s.bytes_sent;
      r.bytes_received += s.bytes_received;
    }
  o << "\"profile\":[";
  bool first = true;
  for (const auto& [region, v] : by_region) {
    auto rd = defs.regions.find(region);
    const std::string name =
        rd == defs.regions.end() ? "region " + std::to_string(region) : rd->second.name;
    RegionStats total;
    std::vector<std::uint64_t> time(np);
    for (std::size_t r = 0; r < np; ++r) {
      const RegionStats& s = v[r];
      total.calls += s.calls;
      total.time_ns += s.time_ns;
      total.bytes_sent += s.bytes_sent;
      total.bytes_received += s.bytes_received;
      time[r] = s.time_ns;
    }
    o << (first ? "" : ",") << "\n{\"name\":" << json_string(name) << ",\"kind\":\""
      << kind_name(defs, region) << "\",\"total_calls\":" << total.calls
      << ",\"total_time_ns\":" << total.time_ns << ",\"total_bytes_sent\":" << total.bytes_sent
      << ",\"total_bytes_received\":" << total.bytes_received << ",\"per_rank\":";
    write_rank_summary(o, time, ReportScale::kExtremes, kHistogramBins);
    if (scale.summarized) {
      // The mean time per rank of each block of ranks (the heat map's rows).
      o << ",\"blocks\":[";
      for (std::size_t b = 0; b < scale.matrix_side(); ++b) {
        const std::size_t lo = b * scale.rank_block, hi = std::min(np, lo + scale.rank_block);
        std::uint64_t sum = 0;
        for (std::size_t r = lo; r < hi; ++r)
          sum += time[r];
        o << (b ? "," : "") << sum / (hi - lo);
      }
      o << "]}";
    } else {
      o << ",\"calls\":[";
      for (std::size_t r = 0; r < np; ++r)
        o << (r ? "," : "") << v[r].calls;
      o << "],\"time_ns\":[";
      for (std::size_t r = 0; r < np; ++r)
        o << (r ? "," : "") << v[r].time_ns;
      o << "]}";
    }
    first = false;
  }
  o << "]";
}

void matrix(std::ostream& o, const ArchiveDefs& defs, const Profile& p) {
  const ReportScale& scale = p.scale;
  const std::size_t side = scale.matrix_side();
  for (const char* what : {"messages", "bytes"}) {
    const auto& m = what[0] == 'm' ? p.matrix_messages : p.matrix_bytes;
    o << (what[0] == 'm' ? "" : ",") << "\"" << what << "\":[";
    for (std::size_t s = 0; s < side; ++s) {
      o << (s ? "," : "") << "[";
      for (std::size_t d = 0; d < side; ++d)
        o << (d ? "," : "") << m[s * side + d];
      o << "]";
    }
    o << "]";
  }
  o << ",\"block\":" << scale.rank_block << ",\"labels\":[";
  for (std::size_t b = 0; b < side; ++b)
    o << (b ? "," : "")
      << json_string(scale.summarized
                         ? block_label(b, scale.rank_block, defs.processes.size(), "ranks")
                         : defs.processes[b].name);
  o << "]";
}

void clock_row(std::ostream& o, const ArchiveDefs& defs, std::size_t li) {
  const Location& l = defs.locations[li];
  std::string drift = "null";
  auto io = l.properties.find("HTRACE::CLOCK::INIT_OFFSET");
  auto fo = l.properties.find("HTRACE::CLOCK::FINAL_OFFSET");
  auto it = l.properties.find("HTRACE::CLOCK::INIT_TIME");
  auto ft = l.properties.find("HTRACE::CLOCK::FINAL_TIME");
  if (io != l.properties.end() && fo != l.properties.end() && it != l.properties.end() &&
      ft != l.properties.end() && ft->second != it->second) {
    std::ostringstream s;
    s.precision(6);
    s << static_cast<double>(fo->second - io->second) /
             static_cast<double>(ft->second - it->second) * 1e6;
    drift = s.str();
  }
  o << "\n{\"label\":" << json_string(location_label(defs, li))
    << ",\"init_offset\":" << prop_or_null(l, "HTRACE::CLOCK::INIT_OFFSET")
    << ",\"init_uncertainty\":" << prop_or_null(l, "HTRACE::CLOCK::INIT_UNCERTAINTY")
    << ",\"final_offset\":" << prop_or_null(l, "HTRACE::CLOCK::FINAL_OFFSET")
    << ",\"final_uncertainty\":" << prop_or_null(l, "HTRACE::CLOCK::FINAL_UNCERTAINTY")
    << ",\"drift_ppm\":" << drift << "}";
}

/// Every location's clock measurements; on a summarized page those of the locations whose offset
/// at MPI_Finalize (else at MPI_Init) is largest and smallest, with the distribution of both.
void clocks(std::ostream& o, const ArchiveDefs& defs, const ReportScale& scale) {
  std::vector<std::uint32_t> rows;
  if (scale.summarized) {
    std::vector<std::int64_t> offset(defs.locations.size());
    for (std::size_t li = 0; li < offset.size(); ++li) {
      const auto& props = defs.locations[li].properties;
      auto f = props.find("HTRACE::CLOCK::FINAL_OFFSET");
      auto i = props.find("HTRACE::CLOCK::INIT_OFFSET");
      offset[li] = f != props.end() ? f->second : i != props.end() ? i->second : 0;
    }
    rows = largest(offset, ReportScale::kExtremes);
    o << "\"clock_summary\":{\"locations\":" << defs.locations.size();
    for (const char* key : {"INIT_OFFSET", "FINAL_OFFSET"}) {
      std::vector<std::int64_t> v;
      for (const Location& l : defs.locations)
        if (auto it = l.properties.find(std::string("HTRACE::CLOCK::") + key);
            it != l.properties.end())
          v.push_back(it->second);
      std::sort(v.begin(), v.end());
      o << ",\"" << (key[0] == 'I' ? "init" : "final") << "\":";
      if (v.empty()) {
        o << "null";
        continue;
      }
      const auto q = [&](double f) {
        return v[static_cast<std::size_t>(f * (v.size() - 1) + 0.5)];
      };
      o << "[" << q(0) << "," << q(0.25) << "," << q(0.5) << "," << q(0.75) << "," << q(1) << "]";
    }
    o << "},\n";
  } else {
    o << "\"clock_summary\":null,\n";
    for (std::uint32_t li = 0; li < defs.locations.size(); ++li)
      rows.push_back(li);
  }
  o << "\"clocks\":[";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    o << (i ? "," : "");
    clock_row(o, defs, rows[i]);
  }
  o << "]";
}

void counts_json(std::ostream& o, const ConditionCounts& c) {
  o << "{\"messages\":" << c.messages << ",\"violations\":" << c.violations
    << ",\"worst_ns\":" << c.worst_ns << "}";
}

void violation_counts(std::ostream& o, const ViolationCounts& v) {
  o << "{\"p2p\":";
  counts_json(o, v.p2p);
  o << ",\"collective\":";
  counts_json(o, v.collectives);
  o << ",\"OpenMP\":";
  counts_json(o, v.openmp);
  o << ",\"incomplete_collectives\":" << v.incomplete_collectives << "}";
}

void probed(std::ostream& o, const ArchiveDefs& defs, const ProbedEvent& e) {
  if (!e.found) {
    o << "null";
    return;
  }
  o << "{\"location\":" << json_string(location_label(defs, e.loc)) << ",\"t\":" << e.t
    << ",\"bytes\":" << e.bytes << ",\"region\":"
    << (e.region == UINT32_MAX ? "null" : json_string(region_name(defs, e.region)))
    << ",\"begin\":" << (e.region == UINT32_MAX ? e.t : e.region_begin)
    << ",\"end\":" << (e.region == UINT32_MAX || e.region_end < 0 ? e.t : e.region_end) << "}";
}

void before_after(std::ostream& o, const ArchiveDefs& defs, const BeforeAfter& b) {
  o << "{\"archive\":" << json_string(b.archive) << ",\"before\":";
  violation_counts(o, b.before);
  o << ",\"message\":";
  if (!b.has_message) {
    o << "null}";
    return;
  }
  auto comm = defs.comms.find(b.channel.comm);
  o << "{\"src\":" << json_string(defs.processes[b.channel.src].name)
    << ",\"dst\":" << json_string(defs.processes[b.channel.dst].name) << ",\"comm\":"
    << json_string(comm == defs.comms.end() ? std::to_string(b.channel.comm) : comm->second.name)
    << ",\"tag\":" << b.channel.tag << ",\"index\":" << b.index << ",\"before\":{\"send\":";
  probed(o, defs, b.send_before);
  o << ",\"recv\":";
  probed(o, defs, b.recv_before);
  o << "},\"after\":{\"send\":";
  probed(o, defs, b.send_after);
  o << ",\"recv\":";
  probed(o, defs, b.recv_after);
  o << "}}}";
}

/// `json` with every '<' escaped, so that it cannot close the <script> element it sits in
/// ('<' only occurs inside JSON strings, where \u003c means the same).
std::string script_safe(const std::string& json) {
  std::string out;
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

} // namespace

void write_html(std::ostream& out, const ArchiveDefs& defs, const Profile& p,
                const HtmlInputs& in) {
  const ReportScale& scale = p.scale;
  // A summarized page names only the locations it shows (detail rows, extremes, waits).
  std::set<std::uint32_t> named(scale.detail_locations.begin(), scale.detail_locations.end());
  const PerLocation per{scale.summarized ? ReportScale::kExtremes : 0, &named};
  std::ostringstream o;
  o << "{";
  summary(o, defs, p, in);
  o << ",\n\"scale\":{\"summarized\":" << (scale.summarized ? "true" : "false")
    << ",\"ranks\":" << scale.ranks << ",\"locations\":" << scale.locations
    << ",\"rank_block\":" << scale.rank_block << ",\"location_block\":" << scale.location_block
    << ",\"full_detail\":" << ReportScale::kFullDetail << "}";
  o << ",\n\"ranks\":[";
  for (std::size_t i = 0; i < (scale.summarized ? 0 : defs.processes.size()); ++i)
    o << (i ? "," : "") << "{\"name\":" << json_string(defs.processes[i].name)
      << ",\"host\":" << json_string(defs.processes[i].host) << "}";
  o << "],\n";
  profile(o, defs, p);
  o << ",\n\"matrix\":{";
  matrix(o, defs, p);
  o << "},\n\"timeline\":{\"bin_ns\":" << p.bin_ns << ",\"labels\":[";
  for (std::size_t l = 0; l < p.mpi_share.size(); ++l)
    o << (l ? "," : "")
      << json_string(scale.summarized
                         ? block_label(l, scale.location_block, defs.locations.size(), "locations")
                         : location_label(defs, l));
  o << "],\"share\":[";
  for (std::size_t l = 0; l < p.mpi_share.size(); ++l) {
    o << (l ? ",\n" : "") << "[";
    for (std::size_t b = 0; b < p.mpi_share[l].size(); ++b)
      o << (b ? "," : "") << std::round(p.mpi_share[l][b] * 1e4) / 1e4;
    o << "]";
  }
  o << "]},\n";
  // Regions by index for the detail timeline.
  std::map<std::uint32_t, std::size_t> region_index;
  std::vector<std::uint32_t> region_list;
  for (const auto& s : p.detail)
    if (region_index.emplace(s.region, region_list.size()).second) region_list.push_back(s.region);
  o << "\"region_names\":[";
  for (std::size_t i = 0; i < region_list.size(); ++i) {
    auto r = defs.regions.find(region_list[i]);
    o << (i ? "," : "")
      << json_string(r == defs.regions.end() ? "region " + std::to_string(region_list[i])
                                             : r->second.name);
  }
  o << "],\"region_kinds\":[";
  for (std::size_t i = 0; i < region_list.size(); ++i) {
    o << (i ? "," : "") << "\"" << kind_name(defs, region_list[i]) << "\"";
  }
  // The detail's rows are locations (all, or a sample on a summarized page); slices and messages
  // name their row.
  std::vector<std::size_t> row_of(defs.locations.size());
  for (std::size_t r = 0; r < scale.detail_locations.size(); ++r)
    row_of[scale.detail_locations[r]] = r;
  o << "],\n\"detail\":{\"window\":[" << p.window_begin_ns << "," << p.window_end_ns
    << "],\"rows\":[";
  for (std::size_t r = 0; r < scale.detail_locations.size(); ++r)
    o << (r ? "," : "") << scale.detail_locations[r];
  o << "],\"total_slices\":" << p.detail_total_slices
    << ",\"total_messages\":" << p.detail_total_messages << ",\"slices\":[";
  for (std::size_t i = 0; i < p.detail.size(); ++i) {
    const auto& s = p.detail[i];
    o << (i ? "," : "") << "[" << row_of[s.loc] << "," << region_index[s.region] << ","
      << s.start_ns << "," << s.dur_ns << "]";
  }
  // The waits of the drawn slices: [slice, pattern, wait_ns, location waited for].
  o << "],\"waits\":[";
  // Slices alike in location, start and region (a region entered again at the same instant) share
  // their waits: the first, the longest, shows them.
  bool first_wait = true;
  std::set<const std::vector<WaitMark>*> shown;
  for (std::size_t i = 0; i < p.detail.size(); ++i)
    if (const auto* marks = p.marks_of(p.detail[i]); marks && shown.insert(marks).second)
      for (const WaitMark& m : *marks) {
        o << (first_wait ? "" : ",") << "[" << i << "," << static_cast<int>(m.pattern) << ","
          << m.wait_ns << "," << m.cause << "]";
        named.insert(m.cause);
        first_wait = false;
      }
  o << "],\"wait_patterns\":[";
  for (std::size_t k = 0; k < analysis::kWaitPatterns; ++k)
    o << (k ? "," : "")
      << json_string(analysis::pattern_name(static_cast<analysis::WaitPattern>(k)));
  o << "],\"messages\":[";
  for (std::size_t i = 0; i < p.detail_messages.size(); ++i) {
    const auto& m = p.detail_messages[i];
    o << (i ? "," : "") << "[" << row_of[m.src_loc] << "," << row_of[m.dst_loc] << "," << m.send_ns
      << "," << m.recv_ns << "," << m.bytes << "]";
  }
  o << "]},\n";
  clocks(o, defs, scale);
  o << ",\n\"clock_note\":"
    << json_string("Offsets each location's clock had to the reference clock as htrace measured "
                   "them in MPI_Init and MPI_Finalize (HTRACE::CLOCK::* location properties), with "
                   "their uncertainty; drift = change of offset / time between the two "
                   "measurements. Time base of this archive: " +
                   property(defs, "HTRACE::CLOCK::TIMEBASE", "unknown") + ".");
  o << ",\n\"violations\":{\"messages\":" << p.messages << ",\"matched\":" << p.matched
    << ",\"violations\":" << p.violations << ",\"unmatched\":" << p.unmatched
    << ",\"worst_ns\":" << p.worst_violation_ns << ",\"worst\":";
  if (p.violations) named.insert({p.worst.src_loc, p.worst.dst_loc});
  if (p.violations)
    o << "{\"src\":" << p.worst.src_loc << ",\"dst\":" << p.worst.dst_loc
      << ",\"send_ns\":" << p.worst.send_ns << ",\"recv_ns\":" << p.worst.recv_ns << "}";
  else
    o << "null";
  o << "},\n\"conditions\":";
  violation_counts(o, in.counts);
  o << ",\n\"before_after\":";
  if (in.before_after)
    before_after(o, defs, *in.before_after);
  else
    o << "null";
  o << ",\n\"wait_states\":";
  if (in.analysis)
    write_wait_states(o, defs, in.analysis->waits, per);
  else
    o << "null";
  o << ",\n\"efficiency\":";
  if (in.analysis)
    write_efficiency(o, *in.analysis, per);
  else
    o << "null";
  o << ",\n\"before_analysis\":";
  if (in.before_analysis) {
    const BeforeAnalysis& b = *in.before_analysis;
    o << "{\"archive\":" << json_string(b.archive) << ",\"wait_states\":";
    write_wait_states(o, *b.defs, b.analysis->waits, per);
    o << ",\"efficiency\":";
    write_efficiency(o, *b.analysis, per);
    o << ",\"comparison\":";
    write_comparison(o, *b.comparison, per);
    o << '}';
  } else {
    o << "null";
  }
  o << ",\n\"correction\":"
    << (in.correction_json.empty() ? "null" : script_safe(in.correction_json));
  // Every location on a page that shows each (an array by index); else those it names (an object
  // by index).
  o << ",\n\"locations\":" << (scale.summarized ? '{' : '[');
  bool first_location = true;
  for (std::uint32_t i = 0; i < defs.locations.size(); ++i) {
    if (scale.summarized && !named.count(i)) continue;
    o << (first_location ? "" : ",");
    if (scale.summarized) o << '"' << i << "\":";
    o << "{\"label\":" << json_string(location_label(defs, i)) << ",\"id\":" << defs.locations[i].id
      << "}";
    first_location = false;
  }
  o << (scale.summarized ? '}' : ']') << "}";

  // The library first: the data mark is then searched after it, so no text inside the library
  // can be taken for the mark.
  std::string page = assets::report_template();
  const std::string data_mark = "/*HTRACE_DATA*/", js_mark = "/*HTRACE_ECHARTS*/";
  const std::size_t j = page.find(js_mark);
  const std::string js = assets::echarts_js();
  page.replace(j, js_mark.size(), js);
  const std::size_t d = page.find(data_mark, j + js.size());
  page.replace(d, data_mark.size(), o.str());
  out << page;
}

} // namespace htrace::report
