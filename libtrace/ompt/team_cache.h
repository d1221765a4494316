// Reuse of team communicators for outermost parallel regions.
//
// Registering a team definition per region instance costs the recorder memory and time in every
// instance of a program with many small regions. libomp runs outermost regions on its "hot team",
// whose thread i stays the same thread from region to region, so the encountering thread reuses
// one team per requested size; members register with the recorder only the first time. Should a
// different thread ever appear at a thread number (the runtime rebuilt the hot team), the member
// updates the definition and the entry is retired, so the next region registers a fresh team.
// Nested teams come from the thread pool in varying order and are registered per instance.
#pragma once

#include "record/recorder.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace htrace::ompt {

struct TeamMembers {
  explicit TeamMembers(std::uint32_t n) : size(n), slots(new std::atomic<record::LocationId>[n]) {
    for (std::uint32_t i = 0; i < n; ++i)
      slots[i].store(kEmpty, std::memory_order_relaxed);
  }
  static constexpr record::LocationId kEmpty = ~record::LocationId{0};
  const std::uint32_t size;
  std::unique_ptr<std::atomic<record::LocationId>[]> slots;
  std::atomic<bool> retired{false};
};

/// Called by each member at the begin of its implicit task: registers it with the recorder unless
/// the same location already holds this thread number.
void join_cached_team(TeamMembers& members, record::CommId team, std::uint32_t thread_num,
                      record::LocationId location);

/// A thread's cache of outermost teams, by requested size (the first few sizes only).
class TeamCache {
public:
  /// The team to use for an outermost region of `size` threads; registers one if needed.
  record::CommId team_for(std::uint32_t size, TeamMembers*& members);

private:
  static constexpr std::uint32_t kEntries = 16;
  struct Entry {
    std::uint32_t size = 0;
    record::CommId team = record::kNoComm;
    std::unique_ptr<TeamMembers> members;
  };
  Entry entries_[kEntries];
};

} // namespace htrace::ompt
