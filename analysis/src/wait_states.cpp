#include "analysis/wait_states.h"

#include "collective_waits.h"
#include "message_waits.h"
#include "mpi_calls.h"
#include "openmp_waits.h"

#include <algorithm>
#include <optional>

namespace htrace::analysis {
namespace {

// Whether some process has more than one location. Every OpenMP wait is one thread waiting for
// another of its process (a team's barrier, a lock, a master's serial code), so where no process
// has two, the OpenMP analysis, and its state per location, is left out.
bool threads_share_processes(const RunLayout& layout) {
  std::vector<std::uint32_t> process_of = layout.process_of;
  std::sort(process_of.begin(), process_of.end());
  return std::adjacent_find(process_of.begin(), process_of.end()) != process_of.end();
}

} // namespace

class WaitStateAnalysis::Impl {
public:
  explicit Impl(RunLayout l)
      : layout(std::move(l)), calls(layout.process_of.size(), layout.regions),
        messages(layout, calls), collectives(layout, calls) {
    if (threads_share_processes(layout)) openmp.emplace(layout, calls.results, calls.wait_observer);
  }
  RunLayout layout;
  detail::MpiCalls calls;
  detail::MessageWaits messages;
  detail::CollectiveWaits collectives;
  std::optional<detail::OpenMpWaits> openmp; ///< where threads share a process
};

WaitStateAnalysis::WaitStateAnalysis(RunLayout layout)
    : impl_(std::make_unique<Impl>(std::move(layout))) {}
WaitStateAnalysis::~WaitStateAnalysis() = default;

void WaitStateAnalysis::enter(std::uint32_t loc, std::int64_t t, std::uint32_t region) {
  impl_->calls.enter(loc, t, region);
  impl_->messages.enter(loc, t, region);
  if (impl_->openmp) impl_->openmp->enter(loc, t, region);
}
void WaitStateAnalysis::leave(std::uint32_t loc, std::int64_t t) {
  impl_->calls.leave(loc, t);
  impl_->messages.leave(loc, t);
  if (impl_->openmp) impl_->openmp->leave(loc, t);
}
void WaitStateAnalysis::send(std::uint32_t loc, std::uint32_t comm, long receiver,
                             std::uint32_t tag, std::uint64_t request) {
  impl_->messages.send(loc, comm, receiver, tag, request);
}
void WaitStateAnalysis::recv(std::uint32_t loc, std::int64_t t, std::uint32_t comm, long sender,
                             std::uint32_t tag, std::uint64_t request) {
  impl_->messages.recv(loc, t, comm, sender, tag, request);
}
void WaitStateAnalysis::isend_complete(std::uint32_t loc, std::uint64_t request) {
  impl_->messages.isend_complete(loc, request);
}
void WaitStateAnalysis::irecv_request(std::uint32_t loc, std::uint64_t request) {
  impl_->messages.irecv_request(loc, request);
}
void WaitStateAnalysis::request_cancelled(std::uint32_t loc, std::uint64_t request) {
  impl_->messages.cancelled(loc, request);
}
void WaitStateAnalysis::collective_begin(std::uint32_t loc) {
  impl_->collectives.begin(loc);
}
void WaitStateAnalysis::collective_end(std::uint32_t loc, std::uint8_t op, std::uint32_t comm,
                                       std::uint32_t root, std::uint64_t received) {
  impl_->collectives.end(loc, op, comm, root, received);
}
void WaitStateAnalysis::nbc_request(std::uint32_t loc, std::uint64_t request) {
  impl_->collectives.nbc_request(loc, request);
}
void WaitStateAnalysis::nbc_complete(std::uint32_t loc, std::uint8_t op, std::uint32_t comm,
                                     std::uint32_t root, std::uint64_t received,
                                     std::uint64_t request) {
  impl_->collectives.nbc_complete(loc, op, comm, root, received, request);
}

void WaitStateAnalysis::thread_fork(std::uint32_t loc, std::int64_t t) {
  if (impl_->openmp) impl_->openmp->fork(loc, t);
}
void WaitStateAnalysis::team_begin(std::uint32_t loc, std::int64_t t, std::uint32_t team) {
  if (impl_->openmp) impl_->openmp->team_begin(loc, t, team);
}
void WaitStateAnalysis::team_end(std::uint32_t loc, std::int64_t t, std::uint32_t team) {
  if (impl_->openmp) impl_->openmp->team_end(loc, t, team);
}
void WaitStateAnalysis::thread_join(std::uint32_t loc, std::int64_t t) {
  if (impl_->openmp) impl_->openmp->join(loc, t);
}
void WaitStateAnalysis::lock_acquire(std::uint32_t loc, std::int64_t t, std::uint8_t model,
                                     std::uint32_t lock, std::uint32_t order) {
  if (impl_->openmp) impl_->openmp->lock_acquire(loc, t, model, lock, order);
}
void WaitStateAnalysis::lock_release(std::uint32_t loc, std::int64_t t, std::uint8_t model,
                                     std::uint32_t lock, std::uint32_t order) {
  if (impl_->openmp) impl_->openmp->lock_release(loc, t, model, lock, order);
}

void WaitStateAnalysis::read_in_time_order() {
  impl_->messages.read_in_time_order();
}

void WaitStateAnalysis::advance(std::int64_t t) {
  impl_->messages.advance(t);
}

void WaitStateAnalysis::prefetch(std::uint32_t loc) const {
  impl_->calls.prefetch(loc);
  if (impl_->openmp) impl_->openmp->prefetch(loc);
  impl_->messages.prefetch(loc);
}

void WaitStateAnalysis::on_call_wait(CallWaitObserver observer) {
  impl_->calls.observer = std::move(observer);
}

void WaitStateAnalysis::on_wait(WaitObserver observer) {
  impl_->calls.wait_observer = std::move(observer);
}

WaitStates WaitStateAnalysis::finish() {
  impl_->messages.finish();
  impl_->collectives.finish();
  if (impl_->openmp) impl_->openmp->finish();
  impl_->calls.finish();
  return impl_->calls.results;
}

} // namespace htrace::analysis
