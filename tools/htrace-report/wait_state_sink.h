// Feeds the events of a streamed archive to the wait-state analysis (analysis/wait_states.h):
// archive ticks become ns from the trace start, communicator ranks become locations.
#pragma once

#include "analysis/wait_states.h"
#include "archive_defs.h"
#include "event_scan.h"

namespace htrace::report {

/// The analysis' view of an archive's definitions.
analysis::RunLayout run_layout(const ArchiveDefs& defs);

class WaitStateSink final : public EventSink {
public:
  explicit WaitStateSink(const ArchiveDefs& defs) : defs_(defs), analysis_(run_layout(defs)) {}
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    analysis_.enter(loc, defs_.ns_from_start(t), region);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) override {
    analysis_.leave(loc, defs_.ns_from_start(t));
  }
  void send(std::uint32_t loc, std::uint64_t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t, std::uint64_t request) override {
    analysis_.send(loc, comm, defs_.member(comm, peer), tag, request);
  }
  void recv(std::uint32_t loc, std::uint64_t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t, std::uint64_t request) override {
    analysis_.recv(loc, comm, defs_.member(comm, peer), tag, request);
  }
  void isend_complete(std::uint32_t loc, std::uint64_t, std::uint64_t request) override {
    analysis_.isend_complete(loc, request);
  }
  void irecv_request(std::uint32_t loc, std::uint64_t, std::uint64_t request) override {
    analysis_.irecv_request(loc, request);
  }
  void request_cancelled(std::uint32_t loc, std::uint64_t, std::uint64_t request) override {
    analysis_.request_cancelled(loc, request);
  }
  void collective_begin(std::uint32_t loc, std::uint64_t) override {
    analysis_.collective_begin(loc);
  }
  void collective(std::uint32_t loc, std::uint64_t, std::uint8_t op, std::uint32_t comm,
                  std::uint32_t root, std::uint64_t, std::uint64_t received) override {
    analysis_.collective_end(loc, op, comm, root, received);
  }
  void nbc_request(std::uint32_t loc, std::uint64_t, std::uint64_t request) override {
    analysis_.nbc_request(loc, request);
  }
  void nbc_complete(std::uint32_t loc, std::uint64_t, std::uint8_t op, std::uint32_t comm,
                    std::uint32_t root, std::uint64_t, std::uint64_t received,
                    std::uint64_t request) override {
    analysis_.nbc_complete(loc, op, comm, root, received, request);
  }
  void finish() override { waits = analysis_.finish(); }

  analysis::WaitStates waits; ///< valid after finish()

private:
  const ArchiveDefs& defs_;
  analysis::WaitStateAnalysis analysis_;
};

} // namespace htrace::report
