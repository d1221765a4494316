// What an archive's files weigh on disk, by part: event files, local definition files, global
// definitions, anchor file, anything else. One pass over the directory (one stat per file, no
// file kept open), so 16,384 locations cost 32,768 stats.
#pragma once

#include <cstdint>
#include <string>

namespace htrace::score {

struct ArchiveFiles {
  std::string anchor;    ///< the .otf2 anchor file
  std::string event_dir; ///< the directory of the <location>.evt and .def files
  std::uint64_t event_files = 0, event_bytes = 0;
  std::uint64_t local_def_files = 0, local_def_bytes = 0;
  std::uint64_t global_def_bytes = 0; ///< <anchor name>.def
  std::uint64_t anchor_bytes = 0;
  std::uint64_t other_bytes = 0; ///< anything else under the archive directory
  std::uint64_t total() const {
    return event_bytes + local_def_bytes + global_def_bytes + anchor_bytes + other_bytes;
  }
  std::uint64_t definition_bytes() const {
    return local_def_bytes + global_def_bytes + anchor_bytes + other_bytes;
  }
};

/// The sizes of the archive whose anchor file is `anchor` (its directory holds the whole archive).
/// Throws an input Error (format/error.h) if the directory cannot be listed.
ArchiveFiles measure_archive_files(const std::string& anchor);

} // namespace htrace::score
