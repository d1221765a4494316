// One htrace-report run: read the definitions, stream the events once into the chosen output,
// write the file atomically (a temporary beside it, renamed when complete).
#pragma once

#include "perfetto_export.h"
#include "vite_export.h"

#include <cstdint>
#include <iosfwd>
#include <string>

namespace htrace::report {

enum class Format { Html, Perfetto, Vite, Json, Csv };

struct RunOptions {
  std::string archive;
  std::string output;
  Format format = Format::Html;
  std::int64_t window_begin_ns = -1, window_end_ns = -1; ///< --window, ns from the start; -1 none
  std::string correction_report;                         ///< htrace-correct --json output, optional
  std::string before;                ///< the archive `archive` was corrected from
  bool progress = false;             ///< progress line on stderr
  std::size_t detail_slices = 20000; ///< HTML: the detail timeline's longest slices
  /// Perfetto: the most trace events written (0: no cap). 2 M records are about 200 MB of JSON,
  /// which the Perfetto UI loads within a browser tab's memory.
  std::uint64_t max_events = kDefaultMaxEvents;
  static constexpr std::uint64_t kDefaultMaxEvents = 2000000;
};

struct RunResult {
  std::uint64_t events = 0;
  PerfettoCounts perfetto; ///< --format perfetto
  ViteCopy vite;           ///< --format vite
};

/// Throws std::runtime_error with a message naming the file on any failure; the output is then
/// not created (and an older one is left as it was).
RunResult run(const RunOptions& options);

} // namespace htrace::report
