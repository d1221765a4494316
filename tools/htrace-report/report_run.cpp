#include "report_run.h"

#include "archive_defs.h"
#include "event_scan.h"
#include "html_report.h"
#include "perfetto_export.h"
#include "profile.h"
#include "vite_export.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
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
  if (!in) throw std::runtime_error("'" + path + "': " + std::strerror(errno));
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
    if (!out_) throw std::runtime_error("'" + path_ + "': " + std::strerror(errno));
  }
  ~AtomicFile() {
    if (!committed_) std::remove(tmp_.c_str());
  }
  std::ostream& stream() { return out_; }
  void commit() {
    out_.flush();
    out_.close();
    if (out_.fail()) throw std::runtime_error("'" + path_ + "': write failed (disk full?)");
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
      throw std::runtime_error("'" + path_ + "': " + std::strerror(errno));
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

} // namespace

RunResult run(const RunOptions& o) {
  if (o.format == Format::Vite) {
    RunResult r;
    r.rewritten_groups = write_vite_copy(o.archive, o.output);
    return r;
  }
  const ArchiveDefs defs = read_definitions(o.archive);
  const std::string correction = o.correction_report.empty() ? "" : read_file(o.correction_report);
  AtomicFile out(o.output);
  ProgressLine progress(o.progress, defs.total_events());
  const Progress report_progress = [&progress](std::uint64_t n) { progress(n); };
  RunResult result;
  if (o.format == Format::Perfetto) {
    PerfettoExport exporter(defs, out.stream());
    result.events = scan_events(o.archive, defs, {&exporter}, report_progress);
    result.slices = exporter.slices();
    result.flows = exporter.flows();
  } else {
    ProfileOptions po;
    if (o.window_begin_s >= 0) {
      po.window_begin_ns = static_cast<std::int64_t>(o.window_begin_s * 1e9);
      po.window_end_ns = static_cast<std::int64_t>(o.window_end_s * 1e9);
    }
    Profile profile(defs, po);
    result.events = scan_events(o.archive, defs, {&profile}, report_progress);
    write_html(out.stream(), defs, profile,
               HtmlInputs{o.archive, archive_bytes(o.archive), result.events, correction});
  }
  out.commit();
  return result;
}

} // namespace htrace::report
