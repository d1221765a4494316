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
  double window_begin_s = -1, window_end_s = -1; ///< detail and efficiency window, s from start
  std::string correction_report;                 ///< htrace-correct --json output, optional
  std::string before;                            ///< the archive `archive` was corrected from
  bool progress = false;                         ///< progress line on stderr
  std::size_t detail_slices = 20000;             ///< HTML: the detail timeline's longest slices
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
