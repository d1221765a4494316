#include "ompt/team_cache.h"

#include "common/log.h"

namespace htrace::ompt {

void join_cached_team(TeamMembers& members, record::CommId team, std::uint32_t thread_num,
                      record::LocationId location) {
  if (thread_num >= members.size) {
    record::add_team_member(team, thread_num, location);
    return;
  }
  std::atomic<record::LocationId>& slot = members.slots[thread_num];
  record::LocationId seen = slot.load(std::memory_order_acquire);
  if (seen == location) return; // the common case: nothing to register
  if (seen == TeamMembers::kEmpty &&
      slot.compare_exchange_strong(seen, location, std::memory_order_acq_rel)) {
    record::add_team_member(team, thread_num, location);
    return;
  }
  log::debug(
      "OMPT: thread %u of a reused team changed location; registering a new team from now on",
      thread_num);
  members.retired.store(true, std::memory_order_release);
  slot.store(location, std::memory_order_release);
  record::add_team_member(team, thread_num, location);
}

record::CommId TeamCache::team_for(std::uint32_t size, TeamMembers*& members) {
  Entry& e = entries_[size % kEntries];
  if (e.members && e.size == size && !e.members->retired.load(std::memory_order_acquire)) {
    members = e.members.get();
    return e.team;
  }
  // Retired entries keep their members alive: workers of the last instance may still read them.
  if (e.members) e.members.release(); // NOLINT: deliberately leaked, a few bytes per retired team
  e.size = size;
  e.team = record::register_thread_team(record::kNoComm, size);
  e.members = std::make_unique<TeamMembers>(size);
  members = e.members.get();
  return e.team;
}

} // namespace htrace::ompt
