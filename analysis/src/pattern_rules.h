// Which calls and operations each of Scalasca's MPI wait-state patterns applies to
// (analysis/README.md): the one place the analysis classifies MPI regions and collective
// operations.
#ifndef HTRACE_ANALYSIS_PATTERN_RULES_H
#define HTRACE_ANALYSIS_PATTERN_RULES_H

#include "analysis/wait_states.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace htrace::analysis::detail {

/// How a blocking send call waits for its receiver.
enum class SendBlocking : std::uint8_t {
  Never,       ///< MPI_Bsend, MPI_Rsend and calls that are not sends: no Late Receiver
  Synchronous, ///< MPI_Ssend: returns only once the receive has started
  IfRendezvous ///< MPI_Send, MPI_Sendrecv[_replace]: blocks when the message is not buffered
};
SendBlocking send_blocking(const std::string& region_name);

/// How many send records (MpiSend, MpiIsend) a call of a region may record: one for the send
/// calls (MPI_Send, MPI_Isend, MPI_Sendrecv, ...), any number for the calls that start persistent
/// or partitioned sends (MPI_Start, MPI_Startall, MPI_Pready*), none for any other call.
enum class SendRecords : std::uint8_t { None, One, Many };
SendRecords send_records(const std::string& region_name);

/// The pattern of a blocking collective operation (OTF2_CollectiveOp), if any: communicator
/// creation and destruction and one-sided window handling have none.
std::optional<WaitPattern> collective_wait_pattern(std::uint8_t otf2_op);

/// An OpenMP barrier region's pattern: explicit for role BARRIER, implicit for IMPLICIT_BARRIER
/// (htrace's and Score-P's "!$omp implicit barrier").
WaitPattern omp_barrier_pattern(const std::map<std::uint32_t, format::RegionDef>& regions,
                                std::uint32_t region);
/// The pattern of a thread that acquires a lock inside `region`: Critical Contention in a critical
/// construct (role CRITICAL), OpenMP Lock Contention in a lock routine that blocks
/// (omp_set_lock, omp_set_nest_lock); none elsewhere.
std::optional<WaitPattern>
omp_lock_pattern(const std::map<std::uint32_t, format::RegionDef>& regions, std::uint32_t region);

} // namespace htrace::analysis::detail
#endif
