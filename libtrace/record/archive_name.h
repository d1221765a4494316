// Choosing the archive directory (rank 0 only; the result is broadcast). The default name never
// replaces anything; an explicit existing name is replaced only with HTRACE_OVERWRITE=1.
#pragma once

#include "common/options.h"

#include <string>

namespace htrace::record {

struct ArchiveChoice {
  std::string path;  ///< archive directory to create (does not exist when ok)
  std::string error; ///< one-line reason when tracing cannot proceed
  std::string note;  ///< something the user should know (e.g. a different name was used)
  bool ok() const { return error.empty(); }
};

/// `program` names the default archive, `now` (seconds since the epoch) dates it.
ArchiveChoice choose_archive_path(const Options& options, const std::string& program, long now);

/// Basename of the running program (/proc/self/exe), "program" if unknown.
std::string program_name();

} // namespace htrace::record
