// What each rank of a failed run left in the archive's salvage directory: its definitions and
// how it ended (libtrace/record/snapshot.h writes them).
#pragma once

#include "record/snapshot.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace htrace::salvage {

struct RankInput {
  bool found = false;
  record::snapshot::RankSnapshot snap;
  std::string end;
  bool finished = false;
  std::uint32_t marker_region = 0; ///< local id of the cut-off marker region (not finished)
};

/// Loads salvage/<rank>.defs and .end of every rank.
/// Throws an input Error (format/error.h) naming the file that cannot be read or does not belong.
std::vector<RankInput> load_ranks(const std::filesystem::path& dir);

} // namespace htrace::salvage
