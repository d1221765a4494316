#include "harmonize/communicator_state.h"

#include "common/log.h"
#include "common/options.h"

#include <memory>
#include <mutex>

namespace htrace::harmonize {

namespace {

int delete_state(MPI_Comm, int, void* attribute, void*) {
  delete static_cast<CommunicatorState*>(attribute);
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  // Not copied on MPI_Comm_dup: a duplicate is a new communicator and gets its own state.
  std::call_once(
      once, [] { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &key, nullptr); });
  return key;
}

} // namespace

HarmonizeSettings settings_from_environment() {
  // The process's one parse: the table bounds every value, and a bad one leaves the defaults
  // (MPI_Init reports it), so the application's MPIX_Harmonize keeps working.
  const Options& o = run_options().options;
  HarmonizeSettings s;
  s.expiry_ns = o.harmonize_expiry_ms * 1000000;
  s.slack.initial_ns = o.harmonize_slack_us > 0 ? o.harmonize_slack_us * 1000 : 0;
  s.slack.grow_factor = static_cast<double>(o.harmonize_grow_percent) / 100.0;
  s.slack.shrink_factor = static_cast<double>(o.harmonize_shrink_percent) / 100.0;
  s.slack.shrink_after = o.harmonize_shrink_after;
  s.sync_config = o.harmonize_sync;
  s.spin_ns = o.harmonize_spin_us * 1000;
  s.verbosity = static_cast<int>(o.verbose);
  return s;
}

CommunicatorState::~CommunicatorState() {
  if (calls > 0)
    log::debug("MPIX_Harmonize: communicator done: %llu calls, %llu deadlines missed here, "
               "%llu resynchronizations",
               static_cast<unsigned long long>(calls), static_cast<unsigned long long>(missed),
               static_cast<unsigned long long>(resyncs));
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (private_comm != MPI_COMM_NULL && !finalized) PMPI_Comm_free(&private_comm);
}

int state_for(MPI_Comm comm, CommunicatorState** state) {
  const int key = keyval();
  if (key == MPI_KEYVAL_INVALID) return MPI_ERR_OTHER;
  void* value = nullptr;
  int found = 0;
  int rc = PMPI_Comm_get_attr(comm, key, &value, &found);
  if (rc != MPI_SUCCESS) return rc;
  if (found) {
    *state = static_cast<CommunicatorState*>(value);
    return MPI_SUCCESS;
  }
  auto fresh = std::make_unique<CommunicatorState>(settings_from_environment());
  rc = PMPI_Comm_dup(comm, &fresh->private_comm);
  if (rc != MPI_SUCCESS) return rc;
  PMPI_Comm_rank(fresh->private_comm, &fresh->rank);
  rc = PMPI_Comm_set_attr(comm, key, fresh.get());
  if (rc != MPI_SUCCESS) return rc;
  *state = fresh.release(); // owned by the attribute from now on
  return MPI_SUCCESS;
}

} // namespace htrace::harmonize
