// One-sided communication (MPI windows) recorded with OTF2's RMA records, in the form Score-P
// writes them: window creation and destruction as RMA collectives, fence as an RMA collective,
// PSCW as group synchronizations, lock/unlock as lock requests and releases, flush and
// MPI_Win_sync as RmaSync, every Put/Get/accumulate as RmaPut/RmaGet/RmaAtomic with bytes and
// target, completed by RmaOpCompleteBlocking at the synchronization that completes it (fence,
// complete, unlock, flush) or by RmaOpCompleteNonBlocking at the wait/test of its request
// (MPI_Rput ...), and by RmaOpCompleteRemote at the synchronization that completes it at the
// target (all of these but flush_local). Called from generated wrappers only while tracing, after
// the PMPI call.
#pragma once

#include "mpi/handles.h"
#include "mpi/request_table.h"
#include "record/recorder.h"

#include <mpi.h>

namespace htrace::mpi {

/// How a window constructor allocates (the RmaCollectiveEnd's collective operation).
enum class WinKind { Create, Allocate, Dynamic };

void on_win_created(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                    MPI_Win win, MPI_Comm comm, const char* name, WinKind kind);
/// `win` is the handle before the call (MPI_Win_free sets it to MPI_WIN_NULL).
void on_win_freed(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                  MPI_Win win);
void on_win_fence(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                  MPI_Win win);

// Passive target. `rank` MPI_PROC_NULL: lock_all / unlock_all / flush_all (every target).
void on_win_lock(record::Location& loc, record::LocalTime entered, int rc, MPI_Win win, int rank,
                 int lock_type);
void on_win_unlock(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, int rank);
/// `remote`: MPI_Win_flush(_all) (complete at the target too), not MPI_Win_flush_local(_all).
void on_win_flush(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, int rank,
                  bool remote);
void on_win_sync(record::Location& loc, record::LocalTime t, int rc, MPI_Win win);

// Active target, general synchronization (PSCW).
void on_win_post(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, MPI_Group group);
void on_win_start(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, MPI_Group group);
void on_win_complete(record::Location& loc, record::LocalTime t, int rc, MPI_Win win);
void on_win_wait(record::Location& loc, record::LocalTime t, int rc, MPI_Win win);
/// MPI_Win_test: like MPI_Win_wait when `done`, else a synchronization of level NONE.
void on_win_test(record::Location& loc, record::LocalTime t, int rc, MPI_Win win, bool done);

/// MPI_Win_set_name: the window's definition carries the name.
void on_win_named(int rc, MPI_Win win, const char* name);

/// Communication calls. Bytes are the origin side's (type size times count).
enum class RmaOp { Put, Get, Accumulate, GetAccumulate, FetchAndOp, CompareAndSwap };
/// `request`: the request of MPI_Rput & co. (MPI_REQUEST_NULL for the others); `op` the MPI_Op of
/// accumulates (MPI_OP_NULL otherwise). `result_bytes`: bytes fetched by the fetching atomics.
void on_rma_op(record::Location& loc, record::LocalTime entered, int rc, MPI_Win win, int target,
               RmaOp kind, std::uint64_t origin_bytes, std::uint64_t result_bytes, MPI_Op op,
               MPI_Request request);

/// Completion of a request made by on_rma_op (from the wait/test wrappers).
void on_rma_request_complete(record::Location& loc, record::LocalTime t, const PendingRequest& p);
void on_rma_request_test(record::Location& loc, record::LocalTime t, const PendingRequest& p);

} // namespace htrace::mpi
