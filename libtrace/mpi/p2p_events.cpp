#include "mpi/p2p_events.h"

#include "clock/base_clock.h"
#include "mpi/comm_registry.h"
#include "mpi/handles.h"
#include "mpi/io_events.h"
#include "mpi/request_table.h"
#include "mpi/rma_events.h"

#include <atomic>
#include <cstring>
#include <vector>

namespace htrace::mpi {
namespace {

RequestTable& requests() {
  static RequestTable table;
  return table;
}
RequestTable& messages() { // MPI_Message -> communicator of the matched probe
  static RequestTable table(16);
  return table;
}
std::atomic<record::RequestId> g_next_request_id{1};
record::RequestId new_request_id() {
  return g_next_request_id.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t received_bytes(const MPI_Status* status) {
#if defined(OPEN_MPI)
  // What PMPI_Get_count(MPI_BYTE) reads, without the call.
  return static_cast<std::uint64_t>(status->_ucount);
#elif defined(MPICH)
  // MPICH's layout (MPICH ABI: Intel MPI, Cray MPICH, MVAPICH): the byte count's high bits sit
  // above the cancelled flag.
  return static_cast<std::uint64_t>(static_cast<unsigned>(status->count_lo)) |
         (static_cast<std::uint64_t>(static_cast<unsigned>(status->count_hi_and_cancelled) >> 1)
          << 32);
#else
  int count = 0;
  if (PMPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED ||
      count < 0)
    return 0;
  return static_cast<std::uint64_t>(count);
#endif
}

bool was_cancelled(const MPI_Status* status) {
  int flag = 0;
  return PMPI_Test_cancelled(status, &flag) == MPI_SUCCESS && flag != 0;
}

void write_started(record::Location& loc, record::LocalTime t, const PendingRequest& p) {
  if (p.kind == PendingRequest::Kind::Send)
    loc.mpi_isend(t, p.peer, p.comm, p.tag, p.bytes, p.id);
  else
    loc.mpi_irecv_request(t, p.id);
}

} // namespace

void on_send(record::Location& loc, record::LocalTime t, int count, MPI_Datatype type, int dest,
             int tag, MPI_Comm comm) {
  const record::CommId id = comm_id(comm);
  if (dest == MPI_PROC_NULL || id == record::kNoComm) return;
  loc.mpi_send(t, static_cast<std::uint32_t>(dest), id, static_cast<std::uint32_t>(tag),
               bytes_of(count, type));
}

void on_isend(record::Location& loc, record::LocalTime t, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, MPI_Request request, bool persistent) {
  const record::CommId id = comm_id(comm);
  if (dest == MPI_PROC_NULL || request == MPI_REQUEST_NULL || id == record::kNoComm) return;
  PendingRequest p;
  p.kind = PendingRequest::Kind::Send;
  p.persistent = persistent;
  p.active = !persistent;
  p.comm = id;
  p.peer = static_cast<std::uint32_t>(dest);
  p.tag = static_cast<std::uint32_t>(tag);
  p.bytes = bytes_of(count, type);
  p.id = persistent ? 0 : new_request_id();
  requests().insert(handle_key(request), RequestTable::current_owner(), p);
  if (!persistent) write_started(loc, t, p);
}

void on_recv(record::Location& loc, record::LocalTime t, MPI_Comm comm, const MPI_Status* status) {
  const record::CommId id = comm_id(comm);
  if (status->MPI_SOURCE == MPI_PROC_NULL || id == record::kNoComm) return;
  loc.mpi_recv(t, static_cast<std::uint32_t>(status->MPI_SOURCE), id,
               static_cast<std::uint32_t>(status->MPI_TAG), received_bytes(status));
}

void on_irecv(record::Location& loc, record::LocalTime t, int source, MPI_Comm comm,
              MPI_Request request, bool persistent) {
  const record::CommId id = comm_id(comm);
  if (source == MPI_PROC_NULL || request == MPI_REQUEST_NULL || id == record::kNoComm) return;
  PendingRequest p;
  p.kind = PendingRequest::Kind::Receive;
  p.persistent = persistent;
  p.active = !persistent;
  p.comm = id;
  p.peer = static_cast<std::uint32_t>(source);
  p.id = persistent ? 0 : new_request_id();
  requests().insert(handle_key(request), RequestTable::current_owner(), p);
  if (!persistent) write_started(loc, t, p);
}

void on_start(record::Location& loc, record::LocalTime t, MPI_Request request) {
  PendingRequest p;
  if (requests().start(handle_key(request), RequestTable::current_owner(), new_request_id(), p))
    write_started(loc, t, p);
}

void on_message(MPI_Message message, MPI_Comm comm) {
  const record::CommId id = comm_id(comm);
  if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC || id == record::kNoComm)
    return;
  PendingRequest p;
  p.kind = PendingRequest::Kind::Receive;
  p.comm = id;
  messages().insert(handle_key(message), RequestTable::current_owner(), p);
}

void on_mrecv(record::Location& loc, record::LocalTime t, MPI_Message message,
              const MPI_Status* status) {
  PendingRequest p;
  if (!messages().complete(handle_key(message), RequestTable::current_owner(), p))
    return; // MPI_MESSAGE_NO_PROC or unseen probe
  if (status->MPI_SOURCE == MPI_PROC_NULL) return;
  loc.mpi_recv(t, static_cast<std::uint32_t>(status->MPI_SOURCE), p.comm,
               static_cast<std::uint32_t>(status->MPI_TAG), received_bytes(status));
}

void on_imrecv(record::Location& loc, record::LocalTime t, MPI_Message message,
               MPI_Request request) {
  PendingRequest p;
  if (!messages().complete(handle_key(message), RequestTable::current_owner(), p) ||
      request == MPI_REQUEST_NULL)
    return;
  p.id = new_request_id();
  requests().insert(handle_key(request), RequestTable::current_owner(), p);
  write_started(loc, t, p);
}

void on_collective_end(record::Location& loc, record::LocalTime t, const CollectiveInfo& i,
                       MPI_Comm comm) {
  const record::CommId id = comm_id(comm);
  if (id == record::kNoComm) return; // no Begin was written either (skeleton coll)
  loc.mpi_collective_end(t, i.op, id, i.root, i.bytes_sent, i.bytes_received);
}

void on_nbc_request(record::Location& loc, record::LocalTime t, const CollectiveInfo& info,
                    MPI_Comm comm, MPI_Request request) {
  const record::CommId id = comm_id(comm);
  if (request == MPI_REQUEST_NULL || id == record::kNoComm) return;
  PendingRequest p;
  p.kind = PendingRequest::Kind::Collective;
  p.op = info.op;
  p.comm = id;
  p.peer = info.root;
  p.bytes = info.bytes_sent;
  p.bytes_received = info.bytes_received;
  p.id = new_request_id();
  requests().insert(handle_key(request), RequestTable::current_owner(), p);
  loc.mpi_nbc_request(t, p.id);
}

void on_complete(record::Location& loc, record::LocalTime t, MPI_Request request,
                 const MPI_Status* status) {
  if (request == MPI_REQUEST_NULL) return;
  PendingRequest p;
  if (!requests().complete(handle_key(request), RequestTable::current_owner(), p)) return;
  if (p.kind == PendingRequest::Kind::Rma) return on_rma_request_complete(loc, t, p);
  if (p.kind == PendingRequest::Kind::Io) return on_io_request_complete(loc, t, p, status);
  if (p.cancel_requested && was_cancelled(status)) {
    loc.mpi_request_cancelled(t, p.id);
    return;
  }
  switch (p.kind) {
  case PendingRequest::Kind::Send:
    loc.mpi_isend_complete(t, p.id);
    break;
  case PendingRequest::Kind::Receive:
    if (status->MPI_SOURCE == MPI_PROC_NULL) break; // a wildcard-free PROC_NULL receive: no message
    loc.mpi_irecv(t, static_cast<std::uint32_t>(status->MPI_SOURCE), p.comm,
                  static_cast<std::uint32_t>(status->MPI_TAG), received_bytes(status), p.id);
    break;
  case PendingRequest::Kind::Collective:
    loc.mpi_nbc_complete(t, p.comm, p.op, p.peer, p.bytes, p.bytes_received, p.id);
    break;
  case PendingRequest::Kind::Rma:
  case PendingRequest::Kind::Io:
    break; // handled above
  }
}

void on_test(record::Location& loc, record::LocalTime t, MPI_Request request, bool completed,
             const MPI_Status* status) {
  if (completed) return on_complete(loc, t, request, status);
  PendingRequest p;
  if (request == MPI_REQUEST_NULL ||
      !requests().find(handle_key(request), RequestTable::current_owner(), p) || !p.active)
    return;
  if (p.kind == PendingRequest::Kind::Rma)
    on_rma_request_test(loc, t, p);
  else if (p.kind == PendingRequest::Kind::Io)
    on_io_request_test(loc, t, p);
  else
    loc.mpi_request_test(t, p.id);
}

void on_request_free(record::Location& loc, record::LocalTime t, MPI_Request request) {
  // Freeing an active Isend detaches it: MPI still delivers the message, the program will never
  // see the completion. Readers need the Isend closed (matching, MOTIV), so the request ends here;
  // an active receive or collective freed this way has no observable result and records nothing.
  PendingRequest p;
  if (request == MPI_REQUEST_NULL ||
      !requests().erase(handle_key(request), RequestTable::current_owner(), &p))
    return;
  if (p.active && p.kind == PendingRequest::Kind::Send) loc.mpi_isend_complete(t, p.id);
}

void track_request(MPI_Request request, const PendingRequest& pending) {
  if (request != MPI_REQUEST_NULL)
    requests().insert(handle_key(request), RequestTable::current_owner(), pending);
}

void on_cancel(MPI_Request request) {
  if (request != MPI_REQUEST_NULL)
    requests().mark_cancelled(handle_key(request), RequestTable::current_owner());
}

// The scratch vectors are initial-exec thread-locals like the other per-call ones: no
// __tls_get_addr call on the wait/test path.
const MPI_Request* save_requests(int count, const MPI_Request* requests_in) {
  thread_local std::vector<MPI_Request> saved __attribute__((tls_model("initial-exec")));
  if (count <= 0) return requests_in;
  if (saved.size() < static_cast<std::size_t>(count)) saved.resize(static_cast<std::size_t>(count));
  std::memcpy(saved.data(), requests_in, sizeof(MPI_Request) * static_cast<std::size_t>(count));
  return saved.data();
}

MPI_Status* statuses_or_scratch(int count, MPI_Status* statuses) {
  thread_local std::vector<MPI_Status> scratch __attribute__((tls_model("initial-exec")));
  if (statuses != MPI_STATUSES_IGNORE || count <= 0) return statuses;
  if (scratch.size() < static_cast<std::size_t>(count))
    scratch.resize(static_cast<std::size_t>(count));
  return scratch.data();
}

} // namespace htrace::mpi
