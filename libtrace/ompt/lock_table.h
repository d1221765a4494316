// Lock ids and acquisition orders for OpenMP locks, nest locks and critical sections.
//
// The key is OMPT's wait_id (the lock's or critical section's address). The order counter of a
// lock is advanced only while the lock is held (at mutex_acquired), so the orders of one lock are
// 1, 2, 3, ... across all threads in acquisition order. The table is a fixed, lock-free hash
// table: no allocation on the hot path.
#pragma once

#include <atomic>
#include <cstdint>

namespace htrace::ompt {

struct LockEntry {
  std::atomic<std::uint64_t> key{0};
  std::atomic<std::uint32_t> id{0}; ///< process-local lock id, 1-based; 0 while being published
  std::atomic<std::uint32_t> order{0};
};

/// The entry of this lock, created on first use. Never fails: when the table is full, all further
/// locks share one overflow entry (logged once); their orders stay consecutive but merged.
LockEntry& lock_entry(std::uint64_t wait_id);

} // namespace htrace::ompt
