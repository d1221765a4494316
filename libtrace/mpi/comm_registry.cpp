#include "mpi/comm_registry.h"

#include "clock/base_clock.h"
#include "common/log.h"
#include "mpi/collective_info.h"
#include "mpi/handles.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <otf2/OTF2_Events.h>
#include <vector>

namespace htrace::mpi {
namespace {

// Open addressing over atomics: readers never lock. A slot's key, once set, never changes (a
// freed handle keeps its slot with id kNoComm, and Open MPI reuses handle addresses, which then
// find their old slot again), so a reader cannot observe a torn entry.
class HandleMap {
public:
  static constexpr std::size_t kCapacity = 1 << 13;

  record::CommId find(std::uint64_t key) const {
    for (std::size_t i = home(key), n = 0; n < kCapacity; i = (i + 1) & (kCapacity - 1), ++n) {
      const std::uint64_t k = keys_[i].load(std::memory_order_acquire);
      if (k == key) return ids_[i].load(std::memory_order_acquire);
      if (k == 0) return record::kNoComm;
    }
    return record::kNoComm;
  }
  // Caller holds the registry mutex.
  bool set(std::uint64_t key, record::CommId id) {
    for (std::size_t i = home(key), n = 0; n < kCapacity; i = (i + 1) & (kCapacity - 1), ++n) {
      const std::uint64_t k = keys_[i].load(std::memory_order_relaxed);
      if (k == key || k == 0) {
        ids_[i].store(id, std::memory_order_release);
        keys_[i].store(key, std::memory_order_release);
        return true;
      }
    }
    return false;
  }
  void clear() {
    for (std::size_t i = 0; i < kCapacity; ++i) {
      keys_[i].store(0, std::memory_order_relaxed);
      ids_[i].store(record::kNoComm, std::memory_order_relaxed);
    }
  }

private:
  static std::size_t home(std::uint64_t key) { return ((key >> 4) * 0x9e3779b97f4a7c15ull) >> 51; }
  std::atomic<std::uint64_t> keys_[kCapacity] = {};
  std::atomic<record::CommId> ids_[kCapacity] = {};
};

struct Registry {
  std::mutex mutex;
  HandleMap map;
  MPI_Group world_group = MPI_GROUP_NULL;
  bool warned_full = false;
};
Registry& registry() {
  static Registry r;
  return r;
}

// Most programs use one or two communicators in a row: a per-thread one-entry cache skips the
// hash probe. Freeing any communicator bumps the generation, which invalidates every cache (a
// freed handle's address may come back as a different communicator).
std::atomic<std::uint64_t> g_generation{1};
struct LastComm {
  std::uint64_t key = 0;
  std::uint64_t generation = 0;
  record::CommId id = record::kNoComm;
  bool has_shape = false;
  CommShape shape;
};
thread_local LastComm t_last __attribute__((tls_model("initial-exec")));

std::vector<int> world_ranks_of(MPI_Group group) {
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> local(static_cast<std::size_t>(size)), world(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i)
    local[static_cast<std::size_t>(i)] = i;
  if (size > 0)
    PMPI_Group_translate_ranks(group, size, local.data(), registry().world_group, world.data());
  return world; // members outside MPI_COMM_WORLD (spawned processes) come out as MPI_UNDEFINED
}

std::vector<int> members_of(MPI_Comm comm, bool remote) {
  MPI_Group group = MPI_GROUP_NULL;
  if ((remote ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
      MPI_SUCCESS)
    return {};
  std::vector<int> ranks = world_ranks_of(group);
  PMPI_Group_free(&group);
  return ranks;
}

// Stored in the handle map for a communicator with members in another MPI world, so that it is
// looked up once; comm_id() hands it out as kNoComm.
constexpr record::CommId kForeignComm = record::kNoComm - 1;

bool outside_world(const std::vector<int>& world_ranks) {
  for (int r : world_ranks)
    if (r < 0) return true; // MPI_UNDEFINED from the translation
  return false;
}

// Caller holds the registry mutex.
record::CommId register_locked(MPI_Comm comm, const std::string& name, record::CommId parent,
                               const std::vector<int>* members) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  const std::vector<int> local = members ? *members : members_of(comm, false);
  const std::vector<int> remote = inter ? members_of(comm, true) : std::vector<int>{};
  const bool foreign = outside_world(local) || outside_world(remote);
  if (foreign) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      log::rank_warning(
          "a communicator has processes outside MPI_COMM_WORLD (MPI_Comm_spawn, "
          "connect/accept or join): the archive holds this world only, so its messages "
          "and collectives are not recorded (their calls are)");
  }
  const record::CommId id =
      foreign ? kForeignComm : record::register_mpi_comm(name, local, remote, parent);
  if (!registry().map.set(handle_key(comm), id) && !registry().warned_full) {
    registry().warned_full = true;
    log::rank_warning("more than %zu communicators: later ones are re-registered on every use",
                      HandleMap::kCapacity);
  }
  return id;
}

record::CommId register_comm(MPI_Comm comm, const std::string& name, record::CommId parent,
                             const std::vector<int>* members = nullptr) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return register_locked(comm, name, parent, members);
}

CommShape cached_comm_shape(MPI_Comm comm);

} // namespace

void register_predefined_comms() {
  Registry& r = registry();
  r.map.clear();
  PMPI_Comm_group(MPI_COMM_WORLD, &r.world_group);
  register_comm(MPI_COMM_WORLD, "MPI_COMM_WORLD", record::kNoComm);
  register_comm(MPI_COMM_SELF, "MPI_COMM_SELF", record::kNoComm);
  set_comm_shape_source(cached_comm_shape);
}

void clear_comm_registry() {
  set_comm_shape_source(nullptr);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.map.clear();
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  if (r.world_group != MPI_GROUP_NULL) PMPI_Group_free(&r.world_group);
}

record::CommId comm_id(MPI_Comm comm) {
  const std::uint64_t key = handle_key(comm);
  const std::uint64_t generation = g_generation.load(std::memory_order_acquire);
  if (t_last.key == key && t_last.generation == generation) return t_last.id;
  if (comm == MPI_COMM_NULL) return record::kNoComm;
  record::CommId id = registry().map.find(key);
  if (id == record::kNoComm) {
    std::lock_guard<std::mutex> lock(registry().mutex);
    id = registry().map.find(key);
    if (id == record::kNoComm)
      id = register_locked(comm, "MPI communicator", record::kNoComm, nullptr);
  }
  if (id == kForeignComm) id = record::kNoComm;
  t_last = LastComm{key, generation, id, false, {}};
  return id;
}

namespace {
// Shape of a collective's communicator from the per-thread cache (filled by comm_id).
CommShape cached_comm_shape(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return query_comm_shape(comm);
  comm_id(comm);
  if (!t_last.has_shape) {
    t_last.shape = query_comm_shape(comm);
    t_last.has_shape = true;
  }
  return t_last.shape;
}
} // namespace

void on_comm_created(record::Location& loc, record::LocalTime t, MPI_Comm parent, MPI_Comm created,
                     const char* name, CreateKind kind) {
  const record::CommId parent_id = comm_id(parent);
  record::CommId created_id = record::kNoComm;
  if (created != MPI_COMM_NULL) {
    if (kind == CreateKind::DuplicateOfParent) {
      const std::vector<int> members = members_of(parent, false);
      created_id = register_comm(created, name, parent_id, &members);
    } else {
      created_id = register_comm(created, name, parent_id);
    }
  }
  // Every Begin needs its End, so a failed MPI_Comm_create_group ends on the parent; an erroneous
  // call on MPI_COMM_NULL wrote no Begin (skeleton comm_create) and writes no End.
  if (parent_id == record::kNoComm) return;
  const bool over_new = kind == CreateKind::OverNewGroup && created_id != record::kNoComm;
  loc.mpi_collective_end(t, OTF2_COLLECTIVE_OP_CREATE_HANDLE, over_new ? created_id : parent_id,
                         record::kNoRank, 0, 0);
}

record::CommId on_comm_freeing(record::Location& loc, record::LocalTime t, MPI_Comm comm) {
  // MPI_COMM_NULL (an erroneous call MPI reports; mpi4py's suite makes it on purpose) frees
  // nothing: no DESTROY_HANDLE of an undefined communicator.
  if (comm == MPI_COMM_NULL) return record::kNoComm;
  const record::CommId id = comm_id(comm);
  {
    // Forget the handle before MPI can hand its address to another thread's new communicator
    // (a communicator with another world's processes too, though it writes no record).
    std::lock_guard<std::mutex> lock(registry().mutex);
    registry().map.set(handle_key(comm), record::kNoComm);
    g_generation.fetch_add(1, std::memory_order_acq_rel);
  }
  if (id == record::kNoComm) return id;
  loc.mpi_collective_begin(t);
  return id;
}

void on_comm_freed(record::Location& loc, record::LocalTime t, record::CommId freed) {
  if (freed == record::kNoComm) return;
  loc.mpi_collective_end(t, OTF2_COLLECTIVE_OP_DESTROY_HANDLE, freed, record::kNoRank, 0, 0);
  record::release_mpi_comm(freed);
}

} // namespace htrace::mpi
