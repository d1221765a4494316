// Point-to-point (and collective request) semantics of the wrappers: which records a send, receive,
// request start or completion writes, with real peer/tag/bytes. Called from generated wrappers only
// while tracing.
#pragma once

#include "mpi/collective_info.h"
#include "mpi/request_table.h"
#include "record/recorder.h"

#include <mpi.h>

namespace htrace::mpi {

void on_send(record::Location& loc, record::LocalTime t, int count, MPI_Datatype type, int dest,
             int tag, MPI_Comm comm);
/// Isend family (persistent=false) or Send_init family (persistent=true: registered inactive).
void on_isend(record::Location& loc, record::LocalTime t, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, MPI_Request request, bool persistent);
/// Recv/Mrecv-style completion from a status (never MPI_STATUS_IGNORE here).
void on_recv(record::Location& loc, record::LocalTime t, MPI_Comm comm, const MPI_Status* status);
void on_irecv(record::Location& loc, record::LocalTime t, int source, MPI_Comm comm,
              MPI_Request request, bool persistent);
void on_start(record::Location& loc, record::LocalTime t, MPI_Request request);

/// Matched probes: remember the message's communicator for the Mrecv/Imrecv that consumes it.
void on_message(MPI_Message message, MPI_Comm comm);
void on_mrecv(record::Location& loc, record::LocalTime t, MPI_Message message,
              const MPI_Status* status);
void on_imrecv(record::Location& loc, record::LocalTime t, MPI_Message message,
               MPI_Request request);

/// Blocking collective finished (its MpiCollectiveBegin was written before the PMPI call).
void on_collective_end(record::Location& loc, record::LocalTime t, const CollectiveInfo& info,
                       MPI_Comm comm);
/// Non-blocking collective started.
void on_nbc_request(record::Location& loc, record::LocalTime t, const CollectiveInfo& info,
                    MPI_Comm comm, MPI_Request request);

/// `request` is the handle as it was before the wait/test call (MPI_REQUEST_NULL is ignored).
void on_complete(record::Location& loc, record::LocalTime t, MPI_Request request,
                 const MPI_Status* status);
void on_test(record::Location& loc, record::LocalTime t, MPI_Request request, bool completed,
             const MPI_Status* status);
void on_request_free(record::Location& loc, record::LocalTime t, MPI_Request request);
void on_cancel(MPI_Request request);
/// Registers a request of another family (RMA, MPI-IO) so that wait/test complete it.
void track_request(MPI_Request request, const PendingRequest& pending);

/// With MPI_ERR_IN_STATUS, entries whose status says MPI_ERR_PENDING did not complete.
inline bool completed_in(int rc, const MPI_Status& status) {
  return rc != MPI_ERR_IN_STATUS || status.MPI_ERROR != MPI_ERR_PENDING;
}

/// Per-thread scratch so that array variants need no allocation per call: a copy of the request
/// handles (completed ones are overwritten by MPI) and statuses in place of MPI_STATUSES_IGNORE.
const MPI_Request* save_requests(int count, const MPI_Request* requests);
MPI_Status* statuses_or_scratch(int count, MPI_Status* statuses);

} // namespace htrace::mpi
