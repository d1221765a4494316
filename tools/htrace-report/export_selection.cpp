#include "export_selection.h"

#include <cstdio>

namespace htrace::report {
namespace {

std::string seconds(std::int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9f s", static_cast<double>(ns) / 1e9);
  return buf;
}

/// "12 slices, 3 flows and 4 counter values", naming only the kinds that occur.
std::string kinds(const LeftOut& l) {
  std::string out;
  const std::pair<std::uint64_t, const char*> parts[] = {
      {l.slices, "slices"}, {l.flows, "flows"}, {l.counter_values, "counter values"}};
  for (const auto& [n, what] : parts)
    if (n) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  return out;
}

} // namespace

bool ExportSelection::reaches_window(std::int64_t ns) {
  if (in_window_ || ns < limits_.begin_ns) return false;
  in_window_ = true;
  return true;
}

Verdict ExportSelection::take(std::int64_t ns, std::uint64_t n) {
  if (ns < limits_.begin_ns) return Verdict::BeforeWindow;
  if (ns > limits_.end_ns) return Verdict::AfterWindow;
  if (ns >= cut_ns_) return Verdict::AfterCut;
  if (limits_.max_events && taken_ + n > limits_.max_events) {
    cut_ns_ = ns;
    return Verdict::AfterCut;
  }
  taken_ += n;
  return Verdict::Kept;
}

void ExportSelection::left_out(Verdict v, std::uint64_t LeftOut::*what, std::uint64_t n) {
  if (v == Verdict::Kept) return;
  LeftOut& rule = v == Verdict::AfterCut ? after_cut_ : outside_;
  rule.*what += n;
}

std::string left_out_line(const ExportSelection& s) {
  std::string line;
  if (s.outside_window().total())
    line += kinds(s.outside_window()) + " outside the window " + seconds(s.limits().begin_ns) +
            " .. " + seconds(s.limits().end_ns) + " (--window)";
  if (s.after_cut().total())
    line += (line.empty() ? "" : "; ") + kinds(s.after_cut()) + " from " + seconds(s.cut_ns()) +
            " on, past the cap of " + std::to_string(s.limits().max_events) +
            " trace events (--max-events)";
  return line.empty() ? line : "left out " + line;
}

} // namespace htrace::report
