#include "report_run.h"

#include "analysis_compare.h"
#include "analysis_csv.h"
#include "archive_defs.h"
#include "clock_conditions.h"
#include "event_scan.h"
#include "html_report.h"
#include "message_probe.h"
#include "metric_defs.h"
#include "perfetto_export.h"
#include "profile.h"
#include "vite_export.h"
#include "wait_state_sink.h"
#include "wait_states_json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace htrace::report {
namespace {

namespace fs = std::filesystem;

std::uint64_t archive_bytes(const std::string& archive) {
  std::error_code ec;
  const fs::path dir =
      fs::is_directory(archive, ec) ? fs::path(archive) : fs::path(archive).parent_path();
  std::uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  return total;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error("'" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The output file, written under a temporary name and renamed over `path` by commit().
class AtomicFile {
public:
  explicit AtomicFile(std::string path)
      : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(getpid())) {
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw output_error("'" + path_ + "': " + std::strerror(errno));
  }
  ~AtomicFile() {
    if (!committed_) std::remove(tmp_.c_str());
  }
  std::ostream& stream() { return out_; }
  void commit() {
    out_.flush();
    out_.close();
    if (out_.fail()) throw output_error("'" + path_ + "': write failed (disk full?)");
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
      throw output_error("'" + path_ + "': " + std::strerror(errno));
    committed_ = true;
  }

private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

/// "htrace-report: reading events  42%" on stderr, redrawn in place.
class ProgressLine {
public:
  ProgressLine(bool on, std::uint64_t total) : on_(on), total_(total ? total : 1) {}
  ~ProgressLine() {
    if (on_ && drawn_) std::fprintf(stderr, "\r%40s\r", "");
  }
  void operator()(std::uint64_t n) {
    if (!on_) return;
    const auto pct = static_cast<unsigned>(std::min<std::uint64_t>(100, n * 100 / total_));
    if (drawn_ && pct == last_) return;
    std::fprintf(stderr, "\rhtrace-report: reading events %3u%%", pct);
    std::fflush(stderr);
    drawn_ = true;
    last_ = pct;
  }

private:
  bool on_;
  std::uint64_t total_;
  bool drawn_ = false;
  unsigned last_ = 0;
};

/// An archive and its corrected copy have the same locations, in the same processes, with the
/// same number of events each (htrace-correct changes timestamps only).
void check_same_run(const ArchiveDefs& before, const ArchiveDefs& after, const RunOptions& o) {
  bool same = before.locations.size() == after.locations.size() &&
              before.processes.size() == after.processes.size();
  for (std::size_t i = 0; same && i < before.locations.size(); ++i)
    same = before.locations[i].id == after.locations[i].id &&
           before.locations[i].process == after.locations[i].process &&
           before.locations[i].events == after.locations[i].events;
  if (!same)
    throw input_error("--before '" + o.before + "': not the archive '" + o.archive +
                      "' was corrected from (its locations or event counts differ)");
}

EfficiencyWindow efficiency_window_of(const ArchiveDefs& defs, const RunOptions& o) {
  return efficiency_window(defs, o.window_begin_ns, o.window_end_ns);
}

ViolationCounts counts_of(const Profile& p, const ClockConditions& c) {
  ViolationCounts v;
  v.p2p = {p.matched - p.matched_within_process, p.violations - p.violations_within_process,
           p.worst_violation_ns};
  v.collectives = c.collectives;
  v.openmp = c.openmp;
  v.incomplete_collectives = c.incomplete_collectives;
  return v;
}

} // namespace

RunResult run(const RunOptions& o) {
  if (o.format == Format::Vite) {
    RunResult r;
    r.vite = write_vite_copy(o.archive, o.output);
    return r;
  }
  const ArchiveDefs defs = read_definitions(o.archive);
  const std::string correction = o.correction_report.empty() ? "" : read_file(o.correction_report);
  AtomicFile out(o.output);
  RunResult result;
  if (o.format == Format::Perfetto) {
    ProgressLine progress(o.progress, defs.total_events());
    const MetricDefs metrics = read_metric_defs(o.archive);
    ExportLimits limits;
    if (o.window_begin_ns >= 0) {
      limits.begin_ns = o.window_begin_ns;
      limits.end_ns = o.window_end_ns;
    }
    limits.max_events = o.max_events;
    PerfettoExport exporter(defs, metrics, out.stream(), limits);
    result.events =
        scan_events(o.archive, defs, {&exporter}, [&progress](std::uint64_t n) { progress(n); });
    result.perfetto = exporter.counts();
  } else if (o.format == Format::Json || o.format == Format::Csv) {
    std::optional<ArchiveDefs> raw;
    if (!o.before.empty()) {
      raw = read_definitions(o.before);
      check_same_run(*raw, defs, o);
    }
    ProgressLine progress(o.progress, defs.total_events() + (raw ? raw->total_events() : 0));
    std::uint64_t done = 0;
    const Progress report_progress = [&](std::uint64_t n) { progress(done + n); };
    std::optional<RunAnalysis> before;
    if (raw) {
      WaitStateSink sink(*raw, efficiency_window_of(*raw, o));
      done += scan_events(o.before, *raw, {&sink}, report_progress);
      before = std::move(sink.result);
    }
    WaitStateSink sink(defs, efficiency_window_of(defs, o));
    result.events = scan_events(o.archive, defs, {&sink}, report_progress);
    std::optional<Comparison> comparison;
    BeforeAnalysis ba;
    if (before) {
      comparison = compare(*raw, *before, defs, sink.result);
      ba = {o.before, &*raw, &*before, &*comparison};
    }
    if (o.format == Format::Json)
      write_json_report(out.stream(), o.archive, result.events, defs, sink.result,
                        before ? &ba : nullptr);
    else
      write_csv_report(out.stream(), defs, sink.result, before ? &ba : nullptr);
  } else {
    ProfileOptions po;
    po.max_slices = o.detail_slices;
    if (o.window_begin_ns >= 0) {
      po.window_begin_ns = o.window_begin_ns;
      po.window_end_ns = o.window_end_ns;
    }
    // With --before, the archive before correction is read twice (its violations, then its most
    // violated message once that is known) and this one once; progress counts all three.
    BeforeAfter ba;
    std::optional<ArchiveDefs> raw;
    if (!o.before.empty()) {
      raw = read_definitions(o.before);
      check_same_run(*raw, defs, o);
    }
    const std::uint64_t total = defs.total_events() + (raw ? 2 * raw->total_events() : 0);
    ProgressLine progress(o.progress, total);
    std::uint64_t done = 0;
    const Progress report_progress = [&](std::uint64_t n) { progress(done + n); };
    std::optional<RunAnalysis> before_analysis;
    if (raw) {
      ba.archive = o.before;
      Profile before(*raw, po);
      ClockConditions before_conditions(*raw);
      WaitStateSink before_waits(*raw, efficiency_window_of(*raw, o));
      done += scan_events(o.before, *raw, {&before, &before_conditions, &before_waits},
                          report_progress);
      before_analysis = std::move(before_waits.result);
      ba.before = counts_of(before, before_conditions);
      ba.has_message = before.violations > 0;
      if (ba.has_message) {
        ba.channel = before.worst_channel;
        ba.index = before.worst_index;
        ba.send = before.worst_send;
        ba.recv = before.worst_recv;
        MessageProbe probe(*raw, ba.send, ba.recv);
        done += scan_events(o.before, *raw, {&probe}, report_progress);
        ba.send_before = probe.sent;
        ba.recv_before = probe.received;
      }
    }
    Profile profile(defs, po);
    ClockConditions conditions(defs);
    MessageProbe probe(defs, ba.send, ba.recv);
    WaitStateSink waits(defs, efficiency_window_of(defs, o));
    waits.on_wait([&profile](const analysis::WaitStateAnalysis::CallWait& w) { profile.wait(w); });
    std::vector<EventSink*> sinks{&profile, &conditions, &waits};
    if (ba.has_message) sinks.push_back(&probe);
    result.events = scan_events(o.archive, defs, sinks, report_progress);
    ba.send_after = probe.sent;
    ba.recv_after = probe.received;
    std::optional<Comparison> comparison;
    BeforeAnalysis before_in;
    if (before_analysis) {
      comparison = compare(*raw, *before_analysis, defs, waits.result);
      before_in = {o.before, &*raw, &*before_analysis, &*comparison};
    }
    HtmlInputs in{o.archive,
                  archive_bytes(o.archive),
                  result.events,
                  correction,
                  counts_of(profile, conditions),
                  raw ? &ba : nullptr,
                  &waits.result,
                  before_analysis ? &before_in : nullptr};
    write_html(out.stream(), defs, profile, in);
  }
  out.commit();
  return result;
}

} // namespace htrace::report
