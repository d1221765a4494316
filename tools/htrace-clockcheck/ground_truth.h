// Ground truth on the emulated cluster (tests/cluster/htrace-cluster-run): node i's clock is ahead
// of node 0's by offsets[i] - offsets[0] seconds, and rank r runs on node r / ranks_per_node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace htrace::clockcheck {

struct GroundTruth {
  std::vector<std::int64_t> node_offsets_ns;
  int ranks_per_node = 1;
  /// How far `rank`'s base clock is ahead of rank 0's, in ns.
  std::int64_t offset_of(int rank) const;
};

/// Parses "0,0.000037,2.5,-1.75" (seconds, up to 9 decimals, exact) into ns; false on bad text.
bool parse_seconds_list(const std::string& text, std::vector<std::int64_t>& out_ns);

/// From HTRACE_CLUSTER_OFFSETS and HTRACE_CLUSTER_RANKS_PER_NODE; nullopt when not on the
/// emulated cluster, `error` set when the variables are present but malformed.
std::optional<GroundTruth> ground_truth_from_environment(std::string& error);

} // namespace htrace::clockcheck
