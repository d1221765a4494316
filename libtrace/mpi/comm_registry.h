// MPI_Comm -> process-local CommId for event records, plus the communicator life-cycle events
// (creation and destruction are collective operations on the parent communicator).
// Lookups are lock-free (hot path of every p2p and collective wrapper); registrations take a lock.
// A communicator the wrappers never saw created (e.g. by an untraced call) is registered lazily on
// first use, so every CommId in the trace has a Comm definition with the right members.
#pragma once

#include "record/recorder.h"

#include <mpi.h>

namespace htrace::mpi {

/// Caches the world group and registers MPI_COMM_WORLD and MPI_COMM_SELF. After record::start().
void register_predefined_comms();
/// Forgets every handle (MPI_Finalize).
void clear_comm_registry();

/// The id of `comm`, registering it on first sight; kNoComm for MPI_COMM_NULL and for a
/// communicator with members outside MPI_COMM_WORLD (made by MPI_Comm_spawn, connect/accept or
/// join, or merged from one). The archive holds this world's locations only, so such members
/// cannot be named in it: operations on those communicators keep their Enter/Leave but write no
/// message or collective record (callers skip kNoComm), and a warning says so once.
record::CommId comm_id(MPI_Comm comm);

/// How a communicator constructor is recorded. OverParent: a collective over the parent (most).
/// DuplicateOfParent: MPI_Comm_idup, whose new handle cannot be queried yet; members = parent's.
/// OverNewGroup: MPI_Comm_create_group, collective only over the members of the new communicator.
enum class CreateKind { OverParent, DuplicateOfParent, OverNewGroup };

/// Wrapper hooks. on_comm_created: `created` may be MPI_COMM_NULL (not a member).
void on_comm_created(record::Location& loc, record::LocalTime t, MPI_Comm parent, MPI_Comm created,
                     const char* name, CreateKind kind);
record::CommId on_comm_freeing(record::Location& loc, record::LocalTime t, MPI_Comm comm);
void on_comm_freed(record::Location& loc, record::LocalTime t, record::CommId freed);

} // namespace htrace::mpi
