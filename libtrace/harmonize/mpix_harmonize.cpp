// MPIX_Harmonize (Schuchart et al., Alg. 1) on htrace's clock synchronization. One reduction tells
// the root whether any rank missed the last deadline or holds an expired clock model; the root
// broadcasts either a deadline or a resynchronization order; each rank then waits for the deadline
// on the global clock. Everything runs through PMPI on the state's private communicator.
#include "htrace/mpix_harmonize.h"

#include "clock/base_clock.h"
#include "clock/sync.h"
#include "common/log.h"
#include "common/median.h"
#include "harmonize/communicator_state.h"
#include "harmonize/global_wait.h"
#include "mpi/entry_point.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace htrace::harmonize {
namespace {

constexpr int kMissedDeadline = 1;
constexpr int kModelExpired = 2;
constexpr int kRoundTripSamples = 9;

std::int64_t global_now(const CommunicatorState& s) {
  return s.map.to_global(clock::now());
}

// Median of broadcast + reduction round trips seen by the root: the shortest time in which a
// deadline can reach every rank. The slack never drops below it.
std::int64_t measure_round_trip(const CommunicatorState& s) {
  std::vector<std::int64_t> samples;
  for (int i = 0; i < kRoundTripSamples; ++i) {
    int value = 0, sink = 0;
    const std::int64_t begin = clock::now();
    PMPI_Bcast(&value, 1, MPI_INT, 0, s.private_comm);
    PMPI_Reduce(&value, &sink, 1, MPI_INT, MPI_MAX, 0, s.private_comm);
    samples.push_back(clock::now() - begin);
  }
  return median(std::move(samples));
}

int resynchronize(CommunicatorState& s) {
  const clock::SyncOutcome outcome = clock::synchronize(s.private_comm, s.settings.sync_config);
  // Agree on success so that no rank goes on with a deadline the others will not wait for.
  int ok = outcome.ok ? 1 : 0, all_ok = 0;
  int rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, s.private_comm);
  if (rc != MPI_SUCCESS) return rc;
  if (!all_ok) {
    if (!outcome.ok)
      log::error("MPIX_Harmonize: clock synchronization '%s' failed: %s",
                 s.settings.sync_config.c_str(), outcome.error.c_str());
    return MPI_ERR_OTHER;
  }
  s.map = outcome.map;
  ++s.resyncs;
  if (!s.synchronized) {
    const std::int64_t round_trip = measure_round_trip(s);
    if (s.rank == 0) s.slack.set_measured_floor(round_trip);
  }
  s.synchronized = true;
  // Absorbs the ranks' different finishing times of the synchronization (Alg. 1, line 25).
  int value = 0, sink = 0;
  rc = PMPI_Reduce(&value, &sink, 1, MPI_INT, MPI_MAX, 0, s.private_comm);
  s.last_sync_local_ns = clock::now();
  return rc;
}

int harmonize(CommunicatorState& s, int* flag) {
  ++s.calls;
  int local = 0, combined = 0;
  if (s.missed_last_deadline) local |= kMissedDeadline;
  if (!s.synchronized || clock::now() - s.last_sync_local_ns > s.settings.expiry_ns)
    local |= kModelExpired;
  int rc = PMPI_Reduce(&local, &combined, 1, MPI_INT, MPI_BOR, 0, s.private_comm);
  if (rc != MPI_SUCCESS) return rc;

  // order[0]: 1 = resynchronize first; order[1]: the deadline on the global clock.
  std::int64_t order[2] = {0, 0};
  if (s.rank == 0) {
    if (s.calls > 1) s.slack.record_round((combined & kMissedDeadline) == 0);
    if (combined != 0)
      order[0] = 1;
    else
      order[1] = global_now(s) + s.slack.slack_ns();
  }
  rc = PMPI_Bcast(order, 2, MPI_INT64_T, 0, s.private_comm);
  if (rc != MPI_SUCCESS) return rc;
  if (order[0] != 0) {
    rc = resynchronize(s);
    if (rc != MPI_SUCCESS) return rc;
    if (s.rank == 0) order[1] = global_now(s) + s.slack.slack_ns();
    rc = PMPI_Bcast(&order[1], 1, MPI_INT64_T, 0, s.private_comm);
    if (rc != MPI_SUCCESS) return rc;
  }

  const std::int64_t late_ns = global_now(s) - order[1];
  if (late_ns > 0) {
    *flag = 0;
    s.missed_last_deadline = true;
    ++s.missed;
    log::debug("MPIX_Harmonize: missed the deadline by %lld ns (call %llu, %llu missed so far)",
               static_cast<long long>(late_ns), static_cast<unsigned long long>(s.calls),
               static_cast<unsigned long long>(s.missed));
    return MPI_SUCCESS;
  }
  wait_until_global(s.map, order[1], s.settings.spin_ns);
  *flag = 1;
  s.missed_last_deadline = false;
  return MPI_SUCCESS;
}

} // namespace
} // namespace htrace::harmonize

HTRACE_ENTRY_POINT int MPIX_Harmonize(MPI_Comm comm, int* flag) {
  if (flag == nullptr) return MPI_ERR_ARG;
  *flag = 0;
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized) return MPI_ERR_OTHER;
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int inter = 0;
  int rc = PMPI_Comm_test_inter(comm, &inter);
  if (rc != MPI_SUCCESS) return rc;
  if (inter) return MPI_ERR_COMM;
  htrace::harmonize::CommunicatorState* state = nullptr;
  rc = htrace::harmonize::state_for(comm, &state);
  if (rc != MPI_SUCCESS) return rc;
  return htrace::harmonize::harmonize(*state, flag);
}
