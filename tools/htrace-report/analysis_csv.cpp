#include "analysis_csv.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>

namespace htrace::report {
namespace {

/// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
void append_field(std::string& line, std::string_view s) {
  const bool plain = std::none_of(
      s.begin(), s.end(), [](char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; });
  if (plain) {
    line.append(s);
    return;
  }
  line += '"';
  for (const char c : s) {
    if (c == '"') line += '"';
    line += c;
  }
  line += '"';
}

/// Writes each row with one call: the report has a few rows per location and pattern, half a
/// million at 16,384 locations, where formatting field by field through the stream was most of
/// writing it.
class Rows {
public:
  Rows(std::ostream& o, std::string archive) : o_(o), archive_(std::move(archive)) {}
  void operator()(std::string_view section, std::string_view scope, std::string_view key,
                  std::string_view split, std::string_view item, std::string_view value) {
    line_.clear();
    for (const std::string_view f :
         {std::string_view(archive_), section, scope, key, split, item, value}) {
      append_field(line_, f);
      line_ += ',';
    }
    line_.back() = '\n';
    o_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
  }

private:
  std::ostream& o_;
  std::string archive_;
  std::string line_; // the row being written (its capacity kept)
};

std::string number(double v) {
  std::ostringstream s;
  write_number(s, v);
  return s.str() == "null" ? "" : s.str();
}

void waits(Rows& row, const ArchiveDefs& defs, const analysis::WaitStates& w) {
  for (std::size_t i = 0; i < analysis::kWaitPatterns; ++i) {
    const std::string key = analysis::pattern_key(static_cast<analysis::WaitPattern>(i));
    const analysis::PatternTime& p = w.patterns[i];
    row("wait_states", "run", key, "total_ns", "", std::to_string(p.total_ns));
    row("wait_states", "run", key, "calls", "", std::to_string(p.calls));
    row("wait_states", "run", key, "longest_ns", "", std::to_string(p.longest_ns));
    // Only the locations that wait or are waited for: at 100,000 locations the zeros of every
    // pattern were 2.6 M of 3 M rows. (A location without a row has 0 ns, as a region or
    // communicator without one.)
    for (const auto& [split, ns] :
         {std::pair{"by_location", &p.by_location}, std::pair{"caused_by", &p.caused_by}})
      for (std::size_t l = 0; l < ns->size(); ++l)
        if ((*ns)[l] != 0)
          row("wait_states", "run", key, split, std::to_string(l), std::to_string((*ns)[l]));
    for (const auto& [r, ns] : p.by_region)
      row("wait_states", "run", key, "by_region", region_name(defs, r), std::to_string(ns));
    for (const auto& [c, ns] : p.by_comm)
      row("wait_states", "run", key, "by_comm", comm_name(defs, c), std::to_string(ns));
  }
}

void efficiency(Rows& row, const char* scope, const analysis::Efficiency& e,
                const std::string* from) {
  const std::pair<const char*, std::int64_t> times[] = {
      {"begin_ns", e.window.begin_ns},    {"end_ns", e.window.end_ns},
      {"runtime_ns", e.runtime_ns},       {"ideal_runtime_ns", e.ideal_runtime_ns},
      {"max_useful_ns", e.max_useful_ns}, {"ranks", e.ranks}};
  for (const auto& [key, v] : times)
    row("efficiency", scope, key, "", "", std::to_string(v));
  row("efficiency", scope, "avg_useful_ns", "", "", number(e.avg_useful_ns));
  for (const auto& [key, v] : efficiency_metrics(e))
    row("efficiency", scope, key, "", "", number(v));
  if (from) row("efficiency", scope, "from", "", "", *from);
  for (std::size_t l = 0; l < e.locations.size(); ++l) {
    const analysis::LocationTimes& t = e.locations[l];
    const std::string i = std::to_string(l);
    row("efficiency", scope, "locations", "rank", i, t.calls_mpi ? "true" : "false");
    row("efficiency", scope, "locations", "useful_ns", i, std::to_string(t.useful_ns));
    row("efficiency", scope, "locations", "mpi_ns", i, std::to_string(t.mpi_ns));
    row("efficiency", scope, "locations", "waiting_ns", i, std::to_string(t.waiting_ns));
  }
}

void analysis_rows(Rows& row, const ArchiveDefs& defs, const RunAnalysis& a) {
  waits(row, defs, a.waits);
  efficiency(row, "run", a.efficiency.run, nullptr);
  if (a.efficiency.window) efficiency(row, "window", *a.efficiency.window, &a.window_from);
}

} // namespace

void write_csv_report(std::ostream& o, const ArchiveDefs& defs, const RunAnalysis& a,
                      const BeforeAnalysis* before) {
  o << "archive,section,scope,key,split,item,value\n";
  Rows after(o, "archive");
  analysis_rows(after, defs, a);
  if (!before) return;
  Rows raw(o, "before");
  analysis_rows(raw, *before->defs, *before->analysis);
  // What changed: the figures are in the archive's and the before rows with the same keys.
  Rows changed(o, "comparison");
  for (const HeadlineFigure& h : before->comparison->headline) {
    changed("headline", h.scope, h.figure, "before", "", number(h.before));
    changed("headline", h.scope, h.figure, "after", "", number(h.after));
    changed("headline", h.scope, h.figure, "material", "", h.material ? "true" : "false");
  }
  for (const WaitChange& w : before->comparison->waits)
    changed("wait_states", "run", w.pattern, w.split, w.item, w.change);
}

} // namespace htrace::report
