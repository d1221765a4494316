// Process-local definitions: regions, MPI communicators and OpenMP teams. Registered under the
// state mutex (never on the per-event path); unified across ranks in finalize() (unify.cpp).
#include "record/recorder_state.h"

namespace htrace::record {

RegionId register_region(const std::string& name, Paradigm paradigm, RegionRole role) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto found = s.region_by_name.find(name);
  if (found != s.region_by_name.end()) return found->second;
  const auto id = static_cast<RegionId>(s.regions.size());
  s.regions.push_back({name, paradigm, role});
  s.region_by_name.emplace(name, id);
  return id;
}

CommId register_mpi_comm(const std::string& name, const std::vector<int>& world_ranks,
                         const std::vector<int>& remote_world_ranks, CommId parent) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  CommDef def;
  def.name = name;
  def.parent = parent;
  def.world_ranks = world_ranks;
  def.remote_world_ranks = remote_world_ranks;
  s.comms.push_back(std::move(def));
  return static_cast<CommId>(s.comms.size() - 1);
}

// Ids stay unique for the whole run so that one mapping table per location can translate every
// event; the definition of a freed communicator is still needed by the events that used it.
void release_mpi_comm(CommId /*comm*/) {}

CommId register_thread_team(CommId parent, std::uint32_t size) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  CommDef def;
  def.is_team = true;
  def.name = "OpenMP team";
  def.parent = parent;
  def.team_locations.assign(size, kNoLocation);
  def.team_members_missing = size;
  s.comms.push_back(std::move(def));
  return static_cast<CommId>(s.comms.size() - 1);
}

void add_team_member(CommId team, std::uint32_t thread_num, LocationId location) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (team >= s.comms.size() || !s.comms[team].is_team || s.comms[team].alias != kNoComm) return;
  CommDef& def = s.comms[team];
  auto& members = def.team_locations;
  if (thread_num >= members.size()) members.resize(thread_num + 1, kNoLocation);
  if (members[thread_num] == kNoLocation && def.team_members_missing > 0)
    --def.team_members_missing;
  members[thread_num] = location;
  if (def.team_members_missing > 0) return;
  // Complete: merge into an identical earlier team if there is one.
  CommId parent = def.parent;
  while (parent != kNoComm && parent < s.comms.size() && s.comms[parent].alias != kNoComm)
    parent = s.comms[parent].alias;
  auto [it, inserted] = s.team_by_members.emplace(std::make_pair(parent, members), team);
  if (!inserted) {
    def.alias = it->second;
    def.team_locations.clear();
    def.team_locations.shrink_to_fit();
  }
}

} // namespace htrace::record
