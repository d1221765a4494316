#include "analysis/wait_states.h"

#include "collective_waits.h"
#include "message_waits.h"
#include "mpi_calls.h"

namespace htrace::analysis {

class WaitStateAnalysis::Impl {
public:
  explicit Impl(RunLayout l)
      : layout(std::move(l)), calls(layout.process_of.size(), layout.regions),
        messages(layout, calls), collectives(layout, calls) {}
  RunLayout layout;
  detail::MpiCalls calls;
  detail::MessageWaits messages;
  detail::CollectiveWaits collectives;
};

WaitStateAnalysis::WaitStateAnalysis(RunLayout layout)
    : impl_(std::make_unique<Impl>(std::move(layout))) {}
WaitStateAnalysis::~WaitStateAnalysis() = default;

void WaitStateAnalysis::enter(std::uint32_t loc, std::int64_t t, std::uint32_t region) {
  impl_->calls.enter(loc, t, region);
}
void WaitStateAnalysis::leave(std::uint32_t loc, std::int64_t t) {
  impl_->calls.leave(loc, t);
}
void WaitStateAnalysis::send(std::uint32_t loc, std::uint32_t comm, long receiver,
                             std::uint32_t tag, std::uint64_t request) {
  impl_->messages.send(loc, comm, receiver, tag, request);
}
void WaitStateAnalysis::recv(std::uint32_t loc, std::uint32_t comm, long sender, std::uint32_t tag,
                             std::uint64_t request) {
  impl_->messages.recv(loc, comm, sender, tag, request);
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

void WaitStateAnalysis::on_call_wait(CallWaitObserver observer) {
  impl_->calls.observer = std::move(observer);
}

WaitStates WaitStateAnalysis::finish() {
  impl_->messages.finish();
  impl_->collectives.finish();
  impl_->calls.finish();
  return impl_->calls.results;
}

} // namespace htrace::analysis
