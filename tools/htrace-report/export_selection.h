// Which records a streamed export (the Perfetto JSON) keeps: those of a time window, up to a cap on
// the number of records written. The window keeps every call span that overlaps it, whole; the cap
// cuts by time: the first record that would exceed it sets the cut, and nothing that starts at or
// after the cut is kept, while the spans already open there are kept whole. So the output is the
// window (or the trace) from its start up to the cut, complete: every slice that begins there with
// its end, and every flow with both its ends. Decisions are made as the events stream past, in time
// order; nothing is held per event.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace htrace::report {

/// What the caller asks for: a window in ns from the trace start and a cap on records written.
struct ExportLimits {
  std::int64_t begin_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t end_ns = std::numeric_limits<std::int64_t>::max();
  std::uint64_t max_events = 0; ///< 0: no cap
  bool windowed() const { return begin_ns != std::numeric_limits<std::int64_t>::min(); }
};

/// Records an export left out by one rule.
struct LeftOut {
  std::uint64_t slices = 0, flows = 0, counter_values = 0;
  std::uint64_t total() const { return slices + flows + counter_values; }
};

/// Where a record stands once the selection has seen its time.
enum class Verdict : std::uint8_t {
  Kept,
  BeforeWindow, ///< before the window's start (a span may still reach into it)
  AfterWindow,
  AfterCut, ///< in the window, at or after the cap's cut
};

class ExportSelection {
public:
  explicit ExportSelection(const ExportLimits& limits) : limits_(limits) {}
  /// Records written whatever the selection (metadata): they count against the cap.
  void count(std::uint64_t n) { taken_ += n; }

  /// Called with the time of every event before it is handled, in stream order; true once, for the
  /// first event at or after the window's start: the caller then offers its open spans (open()).
  bool reaches_window(std::int64_t ns);
  /// The verdict on `n` records at `ns` (a span's start, a flow end, counter values); Kept takes
  /// them from the cap.
  Verdict take(std::int64_t ns, std::uint64_t n = 1);
  /// A span open when the window starts: kept unless the cap is already spent.
  Verdict open() { return take(limits_.begin_ns); }
  /// Counts a left-out record under the rule its verdict names.
  void left_out(Verdict v, std::uint64_t LeftOut::*what, std::uint64_t n = 1);

  const ExportLimits& limits() const { return limits_; }
  std::uint64_t taken() const { return taken_; }
  bool cut() const { return cut_ns_ != kNoCut; }
  std::int64_t cut_ns() const { return cut_ns_; }
  const LeftOut& outside_window() const { return outside_; }
  const LeftOut& after_cut() const { return after_cut_; }

private:
  static constexpr std::int64_t kNoCut = std::numeric_limits<std::int64_t>::max();
  ExportLimits limits_;
  std::uint64_t taken_ = 0;
  std::int64_t cut_ns_ = kNoCut;
  bool in_window_ = false;
  LeftOut outside_, after_cut_;
};

/// "left out: 12 slices, 3 flows outside the window 0.5 s .. 0.6 s; 40 slices after the cut at
/// 0.55 s (--max-events 1000)", or "" when nothing was left out.
std::string left_out_line(const ExportSelection& s);

} // namespace htrace::report
