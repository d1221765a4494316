#include "mpi/rma_events.h"

#include "mpi/comm_registry.h"
#include "mpi/handles.h"
#include "mpi/p2p_events.h"
#include "record/rma_io_defs.h"

#include <mutex>
#include <otf2/otf2.h>
#include <unordered_map>
#include <vector>

namespace htrace::mpi {
namespace {

constexpr std::uint8_t kSyncProcess = OTF2_RMA_SYNC_LEVEL_PROCESS;
constexpr std::uint8_t kSyncMemory = OTF2_RMA_SYNC_LEVEL_MEMORY;
constexpr record::GroupId kNoGroup = 0xffffffffu;
constexpr std::uint64_t kLockId = 0; ///< the (target, window) pair identifies an MPI lock

/// A window the wrappers saw created. Operations not yet completed at their target are kept with
/// it, so that each gets its completion records at the synchronization that completes it.
struct Window {
  record::RmaWinId id = 0;
  bool allocated = false;              ///< Win_allocate*: freeing it also deallocates
  std::uint32_t my_rank = 0;           ///< this process's rank in the window's communicator
  record::GroupId exposure = kNoGroup; ///< PSCW: group of the open exposure epoch (post)
  record::GroupId access = kNoGroup;   ///< PSCW: group of the open access epoch (start)
  std::uint64_t next_matching = 1;
  struct Op {
    std::uint32_t target;
    std::uint64_t matching;
    bool local_pending; ///< not complete at the origin yet (request-based: their wait/test does it)
  };
  std::vector<Op> open_ops;
};

// Windows are few and RMA calls are synchronized per window by MPI anyway: one mutex keeps
// MPI_THREAD_MULTIPLE programs consistent; lookups never allocate.
std::mutex g_mutex;
std::unordered_map<std::uint64_t, Window>& windows() {
  static auto* table = new std::unordered_map<std::uint64_t, Window>; // outlives exit handlers
  return *table;
}

Window* find_locked(MPI_Win win) {
  auto it = windows().find(handle_key(win));
  return it == windows().end() ? nullptr : &it->second;
}

/// A synchronization completes the window's open operations to `target` (kNoRank: all):
/// RmaOpCompleteBlocking for those not complete at the origin yet, and where it also completes
/// them at the target (`remote`: every synchronization but MPI_Win_flush_local*),
/// RmaOpCompleteRemote, as Score-P writes it. That is as much of the target side as MPI lets the
/// origin see (README: the target itself records nothing).
void complete_ops_locked(record::Location& loc, record::LocalTime t, Window& w,
                         std::uint32_t target, bool remote) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < w.open_ops.size(); ++i) {
    Window::Op op = w.open_ops[i];
    if (target == record::kNoRank || op.target == target) {
      if (op.local_pending) loc.rma_op_complete_blocking(t, w.id, op.matching);
      if (remote) {
        loc.rma_op_complete_remote(t, w.id, op.matching);
        continue;
      }
      op.local_pending = false;
    }
    w.open_ops[kept++] = op;
  }
  w.open_ops.resize(kept);
}

std::uint32_t target_of(int rank) {
  return rank == MPI_PROC_NULL ? record::kNoRank : static_cast<std::uint32_t>(rank);
}

/// World ranks of `group`'s members, as a group definition.
record::GroupId group_id(MPI_Group group) {
  static MPI_Group world = [] {
    MPI_Group g = MPI_GROUP_NULL;
    PMPI_Comm_group(MPI_COMM_WORLD, &g);
    return g;
  }();
  int size = 0;
  if (group == MPI_GROUP_NULL || PMPI_Group_size(group, &size) != MPI_SUCCESS || size < 0)
    return kNoGroup;
  std::vector<int> ranks(static_cast<std::size_t>(size)), world_ranks(ranks.size());
  for (int i = 0; i < size; ++i)
    ranks[static_cast<std::size_t>(i)] = i;
  if (PMPI_Group_translate_ranks(group, size, ranks.data(), world, world_ranks.data()) !=
      MPI_SUCCESS)
    return kNoGroup;
  return record::register_rank_group(world_ranks);
}

} // namespace

void on_win_created(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                    MPI_Win win, MPI_Comm comm, const char* name, WinKind kind) {
  if (rc != MPI_SUCCESS || win == MPI_WIN_NULL) return;
  Window w;
  w.id = record::register_rma_win(name, comm_id(comm));
  w.allocated = kind == WinKind::Allocate;
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  w.my_rank = static_cast<std::uint32_t>(rank);
  w.open_ops.reserve(64);
  const record::RmaWinId id = w.id;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    windows()[handle_key(win)] = std::move(w);
  }
  loc.rma_collective_begin(entered);
  loc.rma_win_create(t, id);
  loc.rma_collective_end(t,
                         kind == WinKind::Allocate ? OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE
                                                   : OTF2_COLLECTIVE_OP_CREATE_HANDLE,
                         OTF2_RMA_SYNC_LEVEL_NONE, id, record::kNoRank, 0, 0);
}

void on_win_freed(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                  MPI_Win win) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = windows().find(handle_key(win));
  if (it == windows().end()) return;
  Window& w = it->second;
  loc.rma_collective_begin(entered);
  complete_ops_locked(loc, t, w, record::kNoRank, true); // MPI_Win_free completes everything
  loc.rma_collective_end(t,
                         w.allocated ? OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE
                                     : OTF2_COLLECTIVE_OP_DESTROY_HANDLE,
                         kSyncProcess | kSyncMemory, w.id, record::kNoRank, 0, 0);
  loc.rma_win_destroy(t, w.id);
  windows().erase(it);
}

void on_win_fence(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                  MPI_Win win) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w) return;
  loc.rma_collective_begin(entered);
  complete_ops_locked(loc, t, *w, record::kNoRank, true);
  loc.rma_collective_end(t, OTF2_COLLECTIVE_OP_BARRIER, kSyncProcess | kSyncMemory, w->id,
                         record::kNoRank, 0, 0);
}

void on_win_lock(record::Location& loc, record::LocalTime entered, int rc, MPI_Win win, int rank,
                 int lock_type) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w) return;
  // MPI may grant the lock lazily (at the first operation or at unlock), so only the request is
  // observable. MPI has one lock per target and window: lock id 0, as Score-P writes it.
  loc.rma_request_lock(entered, w->id, target_of(rank), kLockId,
                       lock_type == MPI_LOCK_EXCLUSIVE ? OTF2_LOCK_EXCLUSIVE : OTF2_LOCK_SHARED);
}

void on_win_unlock(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, int rank) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w) return;
  const std::uint32_t target = target_of(rank);
  complete_ops_locked(loc, t, *w, target, true);
  loc.rma_release_lock(t, w->id, target, kLockId);
}

void on_win_flush(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, int rank,
                  bool remote) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w) return;
  const std::uint32_t target = target_of(rank);
  complete_ops_locked(loc, t, *w, target, remote);
  loc.rma_sync(t, w->id, target, OTF2_RMA_SYNC_TYPE_MEMORY);
}

void on_win_sync(record::Location& loc, record::LocalTime t, int rc, MPI_Win win) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (w) loc.rma_sync(t, w->id, w->my_rank, OTF2_RMA_SYNC_TYPE_MEMORY);
}

void on_win_post(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, MPI_Group group) {
  if (rc != MPI_SUCCESS) return;
  const record::GroupId g = group_id(group);
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w || g == kNoGroup) return;
  w->exposure = g;
  loc.rma_group_sync(t, kSyncProcess, w->id, g);
}

void on_win_start(record::Location& loc, record::LocalTime t, int rc, MPI_Win win,
                  MPI_Group group) {
  if (rc != MPI_SUCCESS) return;
  const record::GroupId g = group_id(group);
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w || g == kNoGroup) return;
  w->access = g;
  loc.rma_group_sync(t, kSyncProcess, w->id, g);
}

void on_win_complete(record::Location& loc, record::LocalTime t, int rc, MPI_Win win) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w) return;
  complete_ops_locked(loc, t, *w, record::kNoRank, true);
  if (w->access != kNoGroup) loc.rma_group_sync(t, kSyncProcess | kSyncMemory, w->id, w->access);
  w->access = kNoGroup;
}

void on_win_test(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, bool done) {
  if (done) return on_win_wait(loc, t, rc, win);
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  // The exposure epoch is still open: a synchronization that synchronized nothing.
  if (w && w->exposure != kNoGroup)
    loc.rma_group_sync(t, OTF2_RMA_SYNC_LEVEL_NONE, w->id, w->exposure);
}

void on_win_wait(record::Location& loc, record::LocalTime t, int rc, MPI_Win win) {
  if (rc != MPI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  Window* w = find_locked(win);
  if (!w) return;
  if (w->exposure != kNoGroup)
    loc.rma_group_sync(t, kSyncProcess | kSyncMemory, w->id, w->exposure);
  w->exposure = kNoGroup;
}

void on_win_named(int rc, MPI_Win win, const char* name) {
  if (rc != MPI_SUCCESS || name == nullptr) return;
  record::RmaWinId id = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    Window* w = find_locked(win);
    if (!w) return;
    id = w->id;
  }
  record::rename_rma_win(id, name);
}

void on_rma_op(record::Location& loc, record::LocalTime entered, int rc, MPI_Win win, int target,
               RmaOp kind, std::uint64_t origin_bytes, std::uint64_t result_bytes, MPI_Op op,
               MPI_Request request) {
  if (rc != MPI_SUCCESS || target == MPI_PROC_NULL) return;
  record::RmaWinId id = 0;
  std::uint64_t matching = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    Window* w = find_locked(win);
    if (!w) return;
    id = w->id;
    matching = w->next_matching++;
    // Request-based operations complete at the origin at their wait/test, the others at a
    // synchronization; all of them at the target at a synchronization.
    w->open_ops.push_back(
        {static_cast<std::uint32_t>(target), matching, request == MPI_REQUEST_NULL});
  }
  const auto remote = static_cast<std::uint32_t>(target);
  switch (kind) {
  case RmaOp::Put:
    loc.rma_put(entered, id, remote, origin_bytes, matching);
    break;
  case RmaOp::Get:
    loc.rma_get(entered, id, remote, origin_bytes, matching);
    break;
  case RmaOp::Accumulate:
    loc.rma_atomic(entered, id, remote, OTF2_RMA_ATOMIC_TYPE_ACCUMULATE, origin_bytes, 0, matching);
    break;
  case RmaOp::GetAccumulate:
  case RmaOp::FetchAndOp: {
    // MPI_NO_OP makes an atomic read: nothing is sent.
    const bool no_op = op == MPI_NO_OP;
    const std::uint8_t type = kind == RmaOp::FetchAndOp && op == MPI_SUM
                                  ? OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ADD
                                  : OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;
    loc.rma_atomic(entered, id, remote, type, no_op ? 0 : origin_bytes, result_bytes, matching);
    break;
  }
  case RmaOp::CompareAndSwap:
    loc.rma_atomic(entered, id, remote, OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP, origin_bytes,
                   result_bytes, matching);
    break;
  }
  if (request != MPI_REQUEST_NULL) {
    PendingRequest p;
    p.kind = PendingRequest::Kind::Rma;
    p.comm = id; // the window
    p.id = matching;
    track_request(request, p);
  }
}

void on_rma_request_complete(record::Location& loc, record::LocalTime t, const PendingRequest& p) {
  loc.rma_op_complete_non_blocking(t, p.comm, p.id);
}

void on_rma_request_test(record::Location& loc, record::LocalTime t, const PendingRequest& p) {
  loc.rma_op_test(t, p.comm, p.id);
}

} // namespace htrace::mpi
