// Writing the unified definitions: global ones on rank 0, per-location mapping tables everywhere
// (shared by the recorder and htrace-salvage, which rebuilds archives from the same pieces; not
// installed).
#pragma once

#include "record/rma_io_defs.h"
#include "record/unify.h"

#include <string>
#include <vector>

struct OTF2_Archive_struct;

namespace htrace::record {

/// The attributes events carry, defined globally with these ids: every location uses the same
/// ids, so no mapping table is needed.
constexpr std::uint32_t kPollsAttribute = 0; ///< HTRACE_ATTR_POLLS, on a poll run's Leave

struct ClockInfo {
  std::uint64_t global_offset = 0; ///< smallest timestamp of any event (ns)
  std::uint64_t trace_length = 0;
  std::uint64_t realtime_at_offset = 0; ///< CLOCK_REALTIME ns at global_offset
};

/// Rank 0 only. Of `all` (indexed by rank) only the rank, host, locations and process properties
/// are used (DefSet::ranks carries just these). Returns "" or the reason.
std::string write_global_definitions(OTF2_Archive_struct* archive, const std::vector<RankDefs>& all,
                                     const Unified& unified, const ClockInfo& clock,
                                     const RmaIoGlobal* rma_io = nullptr);

/// Every rank: one local definition file per location with its REGION and COMM mapping tables
/// (identity maps omitted), even when empty. Returns "" or the reason.
std::string write_local_definitions(OTF2_Archive_struct* archive, const RankDefs& mine,
                                    const IdMaps& maps, const RmaIoMaps* rma_io = nullptr);

} // namespace htrace::record
