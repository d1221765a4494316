#include "ompt/parallel_instances.h"

namespace htrace::ompt {

namespace {

// A worker needs its instance until it reports its (late) end, i.e. until it joins a later
// region. 16384 instances in flight covers any realistic gap; older ones fall back gracefully.
constexpr std::uint64_t kSlots = 1u << 14;
ParallelInstance g_instances[kSlots];
std::atomic<std::uint64_t> g_next_serial{1};

ParallelInstance& slot(std::uint64_t serial) {
  return g_instances[serial & (kSlots - 1)];
}

} // namespace

std::uint64_t begin_parallel_instance(record::CommId team, TeamMembers* members,
                                      record::RegionId region, const void* codeptr) {
  std::uint64_t serial = g_next_serial.fetch_add(1, std::memory_order_relaxed);
  ParallelInstance& p = slot(serial);
  p.serial.store(0, std::memory_order_relaxed); // invalid while being rewritten
  p.team.store(team, std::memory_order_relaxed);
  p.region.store(region, std::memory_order_relaxed);
  p.codeptr.store(codeptr, std::memory_order_relaxed);
  p.members.store(members, std::memory_order_relaxed);
  p.master_end.store(0, std::memory_order_relaxed);
  p.serial.store(serial, std::memory_order_release);
  return serial;
}

ParallelInstance* find_parallel_instance(std::uint64_t serial) {
  ParallelInstance& p = slot(serial);
  return p.serial.load(std::memory_order_acquire) == serial ? &p : nullptr;
}

record::LocalTime parallel_master_end(std::uint64_t serial) {
  ParallelInstance& p = slot(serial);
  record::LocalTime t = p.master_end.load(std::memory_order_acquire);
  // Re-check: the slot may have been reused while we read it.
  return p.serial.load(std::memory_order_acquire) == serial ? t : 0;
}

void set_parallel_master_end(std::uint64_t serial, record::LocalTime t) {
  if (ParallelInstance* p = find_parallel_instance(serial)) {
    record::LocalTime expected = 0;
    p->master_end.compare_exchange_strong(expected, t, std::memory_order_acq_rel);
  }
}

} // namespace htrace::ompt
