// Unification of process-local definitions into global ones, plus the byte format the ranks use to
// send their definitions (shared by the recorder and htrace-salvage, which rebuilds archives from
// the same pieces; not installed).
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

/// Byte format of one rank's definitions (unify_wire.cpp), as it sends them up the tree.
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

// ---- Unification by pairwise merges (a pure function of the ranks' definitions, no MPI) ----
//
// A DefSet is the unified definitions of a run of consecutive ranks. merge() appends a later run's
// set to an earlier one: the earlier set's ids stay what they were, the later set's new entries
// are appended in its own order, and the result is a translation of the later set's ids. Merging
// in rank order therefore gives exactly the ids of one pass over ranks 0, 1, 2, ... whatever the
// tree shape, so the same run always yields the same global definitions. finalize() merges up a
// binomial tree of ranks (log2 p rounds) and sends the translations back down, composed.

/// A reference to a communicator of a DefSet: an MPI communicator or an OpenMP team (kept apart
/// because every MPI communicator precedes every team in the global id space).
struct CommRef {
  bool team = false;
  std::uint32_t index = kNoComm; ///< kNoComm: none
};

struct DefSet {
  /// An MPI communicator, identified by its member lists and its occurrence among those lists.
  struct Comm {
    std::string name;
    bool inter = false;
    std::vector<int> a; ///< members (intercommunicator: the group whose list sorts first)
    std::vector<int> b; ///< intercommunicator: the other group
    std::uint32_t occurrence = 0;
    std::uint32_t parent = kNoComm; ///< an MPI communicator of this set
  };
  struct Team {
    std::string name;
    CommRef parent;
    std::vector<LocationId> members; ///< thread locations (unfilled slots left out)
  };
  std::vector<RankDefs> ranks; ///< rank, host, locations and process properties only, rank order
  std::vector<RegionDef> regions;
  std::vector<Comm> comms;
  std::vector<Team> teams;
};

/// Translation of one DefSet's ids into another's (or into the global ids).
struct SetMap {
  std::vector<std::uint32_t> regions, comms, teams;
};

/// One rank's local ids expressed in its own one-rank DefSet.
struct LeafIds {
  std::vector<std::uint32_t> regions;
  std::vector<CommRef> comms;
};

/// The one-rank set of `defs` (its teams merged when parent and members agree) and `ids`, the
/// rank's local ids in it.
DefSet leaf_set(const RankDefs& defs, LeafIds& ids);
/// Appends `later` (the ranks after `into`'s) to `into`; returns the translation of `later`'s ids.
SetMap merge(DefSet& into, DefSet&& later);
/// `outer` after `inner`: ids of inner's source set translated twice.
SetMap compose(const SetMap& outer, const SetMap& inner);
/// The global ids of the complete set's own ids (teams numbered after the MPI communicators).
SetMap global_ids(const DefSet& complete);
/// The rank's mapping tables from its leaf ids and its leaf set's translation to global ids.
IdMaps local_maps(const LeafIds& ids, const SetMap& to_global);
/// Regions, groups and communicators of the complete set (maps left empty: each rank makes its
/// own with local_maps).
Unified global_definitions(const DefSet& complete);

/// Byte format of sets and translations between ranks (unify_wire.cpp).
std::string serialize(const DefSet& set);
bool deserialize(const std::string& bytes, DefSet& set);
std::string serialize(const SetMap& map);
bool deserialize(const std::string& bytes, SetMap& map);

/// Every rank's definitions at once (`all` indexed by rank), merged up the same binomial tree as
/// in finalize(), with every rank's maps: for tools that unify from files, and for tests.
Unified unify(const std::vector<RankDefs>& all);

} // namespace htrace::record
