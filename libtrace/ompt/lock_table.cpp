#include "ompt/lock_table.h"

#include "common/log.h"

namespace htrace::ompt {

namespace {

constexpr std::uint64_t kSlots = 1u << 16;
constexpr int kMaxProbes = 64;
LockEntry g_locks[kSlots];
LockEntry g_overflow;
std::atomic<std::uint32_t> g_next_id{1};
std::atomic<bool> g_overflow_reported{false};

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

std::uint32_t published_id(LockEntry& e) {
  std::uint32_t id;
  while ((id = e.id.load(std::memory_order_acquire)) == 0) {
    // Another thread inserted this key a moment ago and is assigning its id.
  }
  return id;
}

} // namespace

LockEntry& lock_entry(std::uint64_t wait_id) {
  std::uint64_t key = wait_id == 0 ? 1 : wait_id; // 0 marks a free slot
  std::uint64_t h = mix(key);
  for (int probe = 0; probe < kMaxProbes; ++probe) {
    LockEntry& e = g_locks[(h + probe) & (kSlots - 1)];
    std::uint64_t k = e.key.load(std::memory_order_acquire);
    if (k == key) {
      published_id(e);
      return e;
    }
    if (k == 0) {
      std::uint64_t expected = 0;
      if (e.key.compare_exchange_strong(expected, key, std::memory_order_acq_rel)) {
        e.id.store(g_next_id.fetch_add(1, std::memory_order_relaxed), std::memory_order_release);
        return e;
      }
      if (expected == key) {
        published_id(e);
        return e;
      }
    }
  }
  if (!g_overflow_reported.exchange(true))
    log::rank_warning(
        "more OpenMP locks than the lock table holds; further locks share one lock id");
  std::uint32_t none = 0;
  g_overflow.id.compare_exchange_strong(none, 0xfffffffeu);
  return g_overflow;
}

} // namespace htrace::ompt
