// Reads an OTF2 archive once and tallies its event bytes and records per region and per rank
// (location_scan.h), with the sizes of its other files. Any archive whose event files are
// uncompressed and in OTF2's POSIX layout (htrace's, Score-P's, OTF2's own writers'): the event
// files are read directly, one location at a time, so memory and open files do not grow with the
// locations or the events.
#pragma once

#include "archive_files.h"
#include "score_tally.h"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::score {

struct ArchiveScore {
  std::string archive; ///< as given on the command line
  std::string creator;
  std::uint64_t resolution = 1000000000; ///< ticks per second
  ArchiveFiles files;
  /// The regions (definition order), then "(outside any region)", "(undefined region)" and
  /// "(event files of undefined locations)".
  std::vector<RegionRow> rows;
  std::vector<RankTally> ranks; ///< location groups in definition order
  std::uint64_t locations = 0;
  bool polls_folded = false;           ///< the archive defines HTRACE::POLLS (runs of polls)
  std::uint64_t mismatched_leaves = 0; ///< Leaves that closed no open region of their name
  /// Estimated bytes of the region definitions (names included) in the global definitions: the
  /// part of them that does not grow with the ranks.
  std::uint64_t region_definition_bytes = 0;

  std::uint64_t records() const;
  std::uint64_t event_bytes() const; ///< the rows' bytes: == files.event_bytes
};

/// Scores `archive` (a directory holding one .otf2 anchor file, or that file). Throws an input
/// Error (format/error.h) naming the archive or the file if it cannot be read.
ArchiveScore score_archive(const std::string& archive);

} // namespace htrace::score
