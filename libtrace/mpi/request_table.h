// Pending non-blocking operations keyed by their MPI_Request handle, so that a completion in any
// wait/test variant can write the matching record (MpiIsendComplete, MpiIrecv, NBC complete).
// MPI-free (keys are the handle's bits) so it is unit-tested without MPI. Thread-safe for
// MPI_THREAD_MULTIPLE: keys are spread over shards, each an open-addressing table (linear probing,
// backward-shift deletion) under a spin lock held for a few dozen instructions. Storage grows by
// doubling when a shard is half full, so steady-state operations never allocate.
//
// One handle, several pending operations: Open MPI returns one shared, already-completed request
// object for every Isend it could complete at once, so two outstanding Isends can carry the same
// handle. And with MPI_THREAD_MULTIPLE, MPI frees a request inside the wait/test call, so another
// thread can be handed the same handle before the completing thread has looked its entry up. A key
// therefore holds a FIFO of entries, each tagged with its posting thread (`owner`); operations take
// the caller's oldest entry, else the oldest of any thread.
#pragma once

#include "record/recorder.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace htrace::mpi {

struct PendingRequest {
  /// Rma: MPI_Rput & co. (comm = window, id = matching id, rma_events.cpp); Io: non-blocking
  /// MPI-IO (comm = I/O handle, id = matching id, io_events.cpp).
  enum class Kind : std::uint8_t { Send, Receive, Collective, Rma, Io };
  Kind kind = Kind::Send;
  bool persistent = false;       ///< Send_init/Recv_init: survives completion, inactive until Start
  bool active = true;            ///< persistent requests are inactive between completion and Start
  bool cancel_requested = false; ///< MPI_Cancel was called: the completion may be a cancellation
  record::CollectiveOp op = 0;   ///< Collective only
  record::CommId comm = record::kNoComm;
  std::uint32_t peer = 0; ///< receiver (Send) or the posted source (Receive); Collective: root
  std::uint32_t tag = 0;
  std::uint64_t bytes = 0;          ///< Send: bytes sent; Collective: bytes sent
  std::uint64_t bytes_received = 0; ///< Collective only
  record::RequestId id = 0;         ///< process-unique, new for every Start of a persistent request
};

class RequestTable {
public:
  explicit RequestTable(std::size_t initial_capacity_per_shard = 256);

  using Owner = std::uint32_t; ///< the calling thread (see current_owner())

  /// Adds an entry (behind any existing entries of the same key).
  void insert(std::uint64_t key, Owner owner, const PendingRequest& request);
  /// Copies the entry of `key` into `out`; false if absent.
  bool find(std::uint64_t key, Owner owner, PendingRequest& out);
  /// Removes the entry of `key`, copying it to `*removed` if given; false if absent.
  bool erase(std::uint64_t key, Owner owner, PendingRequest* removed = nullptr);
  /// Completion of `key`: copies an ACTIVE entry to `out`, then erases it, or for a persistent
  /// request marks it inactive. False (nothing written) for unknown or inactive requests.
  bool complete(std::uint64_t key, Owner owner, PendingRequest& out);
  /// Start of a persistent request: marks it active with a fresh id; false if unknown.
  bool start(std::uint64_t key, Owner owner, record::RequestId id, PendingRequest& out);
  /// Sets cancel_requested on an entry; false if unknown.
  bool mark_cancelled(std::uint64_t key, Owner owner);
  std::size_t size() const;

  /// A small number identifying the calling thread, fixed for its lifetime.
  static Owner current_owner();

private:
  struct Slot {
    std::uint64_t key = 0; ///< 0 = empty (no MPI implementation hands out a null request here)
    Owner owner = 0;
    std::uint64_t sequence = 0; ///< insertion order, to pick the oldest of several entries
    PendingRequest value;
  };
  struct Shard {
    mutable std::atomic_flag lock = ATOMIC_FLAG_INIT;
    std::vector<Slot> slots; ///< power-of-two size
    std::size_t used = 0;
    std::uint64_t next_sequence = 0;
  };
  static constexpr std::size_t kShards = 16;

  Shard& shard_of(std::uint64_t key) const;
  static std::size_t home(const Shard& shard, std::uint64_t key);
  static Slot* lookup(Shard& shard, std::uint64_t key, Owner owner);
  /// Runs `f(shard, slot)` on the entry of `key` under its shard's lock; false if absent.
  template <typename F> bool with_entry(std::uint64_t key, Owner owner, F f); // (in the .cpp)
  /// The first empty slot on the probe chain of `key` (the shard has room).
  static std::size_t free_slot(const Shard& shard, std::uint64_t key);
  static void remove(Shard& shard, Slot* slot);
  static void grow(Shard& shard);

  std::unique_ptr<Shard[]> shards_;
};

} // namespace htrace::mpi
