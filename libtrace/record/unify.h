// Unification of process-local definitions into global ones (rank 0), plus the byte format the
// ranks use to send their definitions (not a public header).
//
// Identity of MPI communicators across ranks: two ranks' communicators are the same one when they
// have the same member list (world ranks in comm rank order; for an intercommunicator the pair of
// groups, order-independent) and it is the k-th communicator with that member list each rank
// registered. This holds because MPI creates communicators collectively, in the same order on all
// members; no extra communication at creation time is needed (Score-P instead pays one broadcast
// per creation). OpenMP teams are process-local; identical teams (same parent, same members) of a
// process are merged into one definition.
#pragma once

#include "record/recorder_state.h"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::record {

/// What one rank contributes to the global definitions.
struct RankDefs {
  struct Loc {
    LocationId id = 0;
    std::uint64_t events = 0;
    std::int64_t min_global = INT64_MAX; ///< INT64_MAX when the location wrote no event
    std::int64_t max_global = INT64_MIN;
  };
  int rank = 0;
  std::string host;
  std::vector<Loc> locations;
  std::vector<RegionDef> regions;
  std::vector<CommDef> comms;
  std::vector<std::pair<std::string, std::int64_t>> process_properties;
};

std::string serialize(const RankDefs& defs);
bool deserialize(const std::string& bytes, RankDefs& defs);

/// Per-rank translation of local ids to global ids, the payload sent back to each rank.
struct IdMaps {
  std::vector<std::uint32_t> regions;
  std::vector<std::uint32_t> comms;
};
std::string serialize(const IdMaps& maps);
bool deserialize(const std::string& bytes, IdMaps& maps);

enum class GroupKind : std::uint8_t { MpiLocations, OmpLocations, MpiComm, OmpTeam };

struct GlobalGroup {
  GroupKind kind;
  std::vector<std::uint64_t> members; ///< location ids (…Locations) or indices into them
};

struct GlobalComm {
  std::string name;
  std::uint32_t group = 0;
  std::uint32_t remote_group = kNoComm; ///< intercommunicator: second group
  std::uint32_t parent = kNoComm;
  bool team = false;
};

struct Unified {
  std::vector<RegionDef> regions;
  std::vector<GlobalGroup> groups;
  std::vector<GlobalComm> comms;
  std::vector<IdMaps> maps; ///< index = rank
};

/// `all` is indexed by rank.
Unified unify(const std::vector<RankDefs>& all);

} // namespace htrace::record
