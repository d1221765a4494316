#include "pattern_rules.h"

#include <algorithm>
#include <cctype>
#include <otf2/OTF2_Events.h>

namespace htrace::analysis {

const char* pattern_key(WaitPattern p) {
  switch (p) {
  case WaitPattern::LateSender:
    return "late_sender";
  case WaitPattern::LateSenderWrongOrder:
    return "late_sender_wrong_order";
  case WaitPattern::LateReceiver:
    return "late_receiver";
  case WaitPattern::WaitAtBarrier:
    return "wait_at_barrier";
  case WaitPattern::WaitAtNxN:
    return "wait_at_nxn";
  case WaitPattern::LateBroadcast:
    return "late_broadcast";
  case WaitPattern::EarlyReduce:
    return "early_reduce";
  case WaitPattern::EarlyScan:
    return "early_scan";
  case WaitPattern::OmpExplicitBarrier:
    return "omp_explicit_barrier";
  case WaitPattern::OmpImplicitBarrier:
    return "omp_implicit_barrier";
  case WaitPattern::OmpCriticalContention:
    return "omp_critical_contention";
  case WaitPattern::OmpLockContention:
    return "omp_lock_contention";
  case WaitPattern::OmpIdleThreads:
    return "omp_idle_threads";
  }
  return "unknown";
}

const char* pattern_name(WaitPattern p) {
  switch (p) {
  case WaitPattern::LateSender:
    return "Late Sender";
  case WaitPattern::LateSenderWrongOrder:
    return "Late Sender, Wrong Order";
  case WaitPattern::LateReceiver:
    return "Late Receiver";
  case WaitPattern::WaitAtBarrier:
    return "Wait at Barrier";
  case WaitPattern::WaitAtNxN:
    return "Wait at N x N";
  case WaitPattern::LateBroadcast:
    return "Late Broadcast";
  case WaitPattern::EarlyReduce:
    return "Early Reduce";
  case WaitPattern::EarlyScan:
    return "Early Scan";
  case WaitPattern::OmpExplicitBarrier:
    return "Wait at Explicit OpenMP Barrier";
  case WaitPattern::OmpImplicitBarrier:
    return "Wait at Implicit OpenMP Barrier";
  case WaitPattern::OmpCriticalContention:
    return "Critical Contention";
  case WaitPattern::OmpLockContention:
    return "OpenMP Lock Contention";
  case WaitPattern::OmpIdleThreads:
    return "Idle Threads";
  }
  return "unknown";
}

namespace detail {

namespace {
// Region names as the MPI standard spells them; tracers of Fortran programs may record them in
// lower case.
std::string lower_case(std::string n) {
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return n;
}
bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}
} // namespace

SendBlocking send_blocking(const std::string& region_name) {
  const std::string n = lower_case(region_name);
  if (n == "mpi_ssend") return SendBlocking::Synchronous;
  if (n == "mpi_send" || n == "mpi_sendrecv" || n == "mpi_sendrecv_replace")
    return SendBlocking::IfRendezvous;
  return SendBlocking::Never;
}

SendRecords send_records(const std::string& region_name) {
  const std::string n = lower_case(region_name);
  if (starts_with(n, "mpi_start") || starts_with(n, "mpi_pready")) return SendRecords::Many;
  const bool send = starts_with(n, "mpi_send") || starts_with(n, "mpi_isend") ||
                    starts_with(n, "mpi_bsend") || starts_with(n, "mpi_ibsend") ||
                    starts_with(n, "mpi_ssend") || starts_with(n, "mpi_issend") ||
                    starts_with(n, "mpi_rsend") || starts_with(n, "mpi_irsend");
  // (MPI_Send_init and its kind only describe a persistent send: MPI_Start records it.)
  return send && n.find("_init") == std::string::npos ? SendRecords::One : SendRecords::None;
}

std::optional<WaitPattern> collective_wait_pattern(std::uint8_t otf2_op) {
  switch (otf2_op) {
  case OTF2_COLLECTIVE_OP_BARRIER:
    return WaitPattern::WaitAtBarrier;
  case OTF2_COLLECTIVE_OP_ALLGATHER:
  case OTF2_COLLECTIVE_OP_ALLGATHERV:
  case OTF2_COLLECTIVE_OP_ALLTOALL:
  case OTF2_COLLECTIVE_OP_ALLTOALLV:
  case OTF2_COLLECTIVE_OP_ALLTOALLW:
  case OTF2_COLLECTIVE_OP_ALLREDUCE:
  case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
  case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK:
    return WaitPattern::WaitAtNxN;
  case OTF2_COLLECTIVE_OP_BCAST:
  case OTF2_COLLECTIVE_OP_SCATTER:
  case OTF2_COLLECTIVE_OP_SCATTERV:
    return WaitPattern::LateBroadcast;
  case OTF2_COLLECTIVE_OP_REDUCE:
  case OTF2_COLLECTIVE_OP_GATHER:
  case OTF2_COLLECTIVE_OP_GATHERV:
    return WaitPattern::EarlyReduce;
  case OTF2_COLLECTIVE_OP_SCAN:
  case OTF2_COLLECTIVE_OP_EXSCAN:
    return WaitPattern::EarlyScan;
  default:
    return std::nullopt;
  }
}

WaitPattern omp_barrier_pattern(const std::map<std::uint32_t, format::RegionDef>& regions,
                                std::uint32_t region) {
  auto r = regions.find(region);
  const bool implicit =
      r != regions.end() && r->second.cls.role == OTF2_REGION_ROLE_IMPLICIT_BARRIER;
  return implicit ? WaitPattern::OmpImplicitBarrier : WaitPattern::OmpExplicitBarrier;
}

std::optional<WaitPattern>
omp_lock_pattern(const std::map<std::uint32_t, format::RegionDef>& regions, std::uint32_t region) {
  auto r = regions.find(region);
  if (r == regions.end() || !r->second.cls.openmp()) return std::nullopt;
  if (r->second.cls.role == OTF2_REGION_ROLE_CRITICAL) return WaitPattern::OmpCriticalContention;
  const std::string n = lower_case(r->second.name);
  if (starts_with(n, "omp_set_lock") || starts_with(n, "omp_set_nest_lock"))
    return WaitPattern::OmpLockContention;
  return std::nullopt;
}

} // namespace detail
} // namespace htrace::analysis
