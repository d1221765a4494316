#include "mpi/request_table.h"

namespace htrace::mpi {
namespace {

class SpinGuard {
public:
  explicit SpinGuard(std::atomic_flag& flag) : flag_(flag) {
    while (flag_.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SpinGuard() { flag_.clear(std::memory_order_release); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

private:
  std::atomic_flag& flag_;
};

// Request handles are pointers (Open MPI) or small integers (MPICH): mix all bits.
std::uint64_t mix(std::uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return key;
}

std::size_t round_up_pow2(std::size_t n) {
  std::size_t p = 8;
  while (p < n)
    p <<= 1;
  return p;
}

} // namespace

RequestTable::RequestTable(std::size_t initial_capacity_per_shard)
    : shards_(std::make_unique<Shard[]>(kShards)) {
  for (std::size_t i = 0; i < kShards; ++i)
    shards_[i].slots.resize(round_up_pow2(initial_capacity_per_shard));
}

RequestTable::Shard& RequestTable::shard_of(std::uint64_t key) const {
  return shards_[mix(key) % kShards];
}

std::size_t RequestTable::home(const Shard& shard, std::uint64_t key) {
  return (mix(key) / kShards) & (shard.slots.size() - 1);
}

// The caller's oldest entry of `key`, else the oldest entry of `key` of any thread, else nullptr.
RequestTable::Slot* RequestTable::lookup(Shard& shard, std::uint64_t key, Owner owner) {
  const std::size_t mask = shard.slots.size() - 1;
  Slot* own = nullptr;
  Slot* any = nullptr;
  for (std::size_t i = home(shard, key);; i = (i + 1) & mask) {
    Slot& slot = shard.slots[i];
    if (slot.key == 0) return own != nullptr ? own : any;
    if (slot.key != key) continue;
    if (slot.owner == owner && (own == nullptr || slot.sequence < own->sequence)) own = &slot;
    if (any == nullptr || slot.sequence < any->sequence) any = &slot;
  }
}

namespace {
// Constant-initialized and initial-exec: no guard and no __tls_get_addr on the per-call path.
thread_local RequestTable::Owner t_owner __attribute__((tls_model("initial-exec"))) = 0;
} // namespace

RequestTable::Owner RequestTable::current_owner() {
  static std::atomic<Owner> next{1};
  if (t_owner == 0) t_owner = next.fetch_add(1, std::memory_order_relaxed); // 0: not yet assigned
  return t_owner;
}

// Backward-shift deletion keeps probe chains intact without tombstones.
void RequestTable::remove(Shard& shard, Slot* slot) {
  const std::size_t mask = shard.slots.size() - 1;
  std::size_t hole = static_cast<std::size_t>(slot - shard.slots.data());
  for (std::size_t i = (hole + 1) & mask; shard.slots[i].key != 0; i = (i + 1) & mask) {
    const std::size_t want = home(shard, shard.slots[i].key);
    // Move entry i into the hole if its home position is not in (hole, i].
    const bool stays = hole <= i ? (hole < want && want <= i) : (hole < want || want <= i);
    if (stays) continue;
    shard.slots[hole] = shard.slots[i];
    hole = i;
  }
  shard.slots[hole].key = 0;
  --shard.used;
}

template <typename F> bool RequestTable::with_entry(std::uint64_t key, Owner owner, F f) {
  Shard& shard = shard_of(key);
  SpinGuard guard(shard.lock);
  Slot* slot = lookup(shard, key, owner);
  return slot != nullptr && f(shard, *slot);
}

std::size_t RequestTable::free_slot(const Shard& shard, std::uint64_t key) {
  const std::size_t mask = shard.slots.size() - 1;
  std::size_t i = home(shard, key);
  while (shard.slots[i].key != 0)
    i = (i + 1) & mask;
  return i;
}

void RequestTable::grow(Shard& shard) {
  std::vector<Slot> old(shard.slots.size() * 2);
  old.swap(shard.slots);
  shard.used = 0;
  for (const Slot& slot : old) {
    if (slot.key == 0) continue;
    shard.slots[free_slot(shard, slot.key)] = slot;
    ++shard.used;
  }
}

void RequestTable::insert(std::uint64_t key, Owner owner, const PendingRequest& request) {
  Shard& shard = shard_of(key);
  SpinGuard guard(shard.lock);
  if (2 * (shard.used + 1) > shard.slots.size()) grow(shard);
  const std::size_t i = free_slot(shard, key);
  shard.slots[i].key = key;
  shard.slots[i].owner = owner;
  shard.slots[i].sequence = shard.next_sequence++;
  shard.slots[i].value = request;
  ++shard.used;
}

bool RequestTable::find(std::uint64_t key, Owner owner, PendingRequest& out) {
  return with_entry(key, owner, [&](Shard&, Slot& slot) {
    out = slot.value;
    return true;
  });
}

bool RequestTable::erase(std::uint64_t key, Owner owner, PendingRequest* removed) {
  return with_entry(key, owner, [&](Shard& shard, Slot& slot) {
    if (removed != nullptr) *removed = slot.value;
    remove(shard, &slot);
    return true;
  });
}

bool RequestTable::complete(std::uint64_t key, Owner owner, PendingRequest& out) {
  return with_entry(key, owner, [&](Shard& shard, Slot& slot) {
    if (!slot.value.active) return false;
    out = slot.value;
    if (slot.value.persistent) {
      slot.value.active = false;
      slot.value.cancel_requested = false;
    } else {
      remove(shard, &slot);
    }
    return true;
  });
}

bool RequestTable::start(std::uint64_t key, Owner owner, record::RequestId id,
                         PendingRequest& out) {
  return with_entry(key, owner, [&](Shard&, Slot& slot) {
    slot.value.active = true;
    slot.value.cancel_requested = false;
    slot.value.id = id;
    out = slot.value;
    return true;
  });
}

bool RequestTable::mark_cancelled(std::uint64_t key, Owner owner) {
  return with_entry(key, owner, [](Shard&, Slot& slot) {
    slot.value.cancel_requested = true;
    return true;
  });
}

std::size_t RequestTable::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < kShards; ++i) {
    SpinGuard guard(shards_[i].lock);
    n += shards_[i].used;
  }
  return n;
}

} // namespace htrace::mpi
