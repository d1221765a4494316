// Feeds the events of a streamed archive to the wait-state analysis (analysis/wait_states.h) and
// the efficiency metrics built on it (analysis/efficiency.h): archive ticks become ns from the
// trace start, communicator ranks become locations.
#pragma once

#include "analysis/efficiency.h"
#include "analysis/wait_states.h"
#include "archive_defs.h"
#include "event_scan.h"

#include <optional>
#include <string>

namespace htrace::report {

/// What the analysis found in one archive.
struct RunAnalysis {
  analysis::WaitStates waits;
  analysis::EfficiencyAnalysis::Results efficiency;
  std::string window_from; ///< EfficiencyWindow::from
};

/// The phase whose efficiency a report measures besides the whole run.
struct EfficiencyWindow {
  std::optional<analysis::TimeWindow> window;
  std::string from; ///< what chose it: "--window", "MPI_Init..MPI_Finalize"; "" for none
};

/// --window's (`begin_ns` >= 0), else the run between MPI_Init and MPI_Finalize where the
/// archive has htrace's clock measurements, else none.
EfficiencyWindow efficiency_window(const ArchiveDefs& defs, std::int64_t begin_ns,
                                   std::int64_t end_ns);

/// The analysis' view of an archive's definitions.
analysis::RunLayout run_layout(const ArchiveDefs& defs);

class WaitStateSink final : public EventSink {
public:
  explicit WaitStateSink(const ArchiveDefs& defs, EfficiencyWindow window = {})
      : defs_(defs), analysis_(run_layout(defs)),
        efficiency_(defs.locations.size(), defs.regions, window.window) {
    result.window_from = std::move(window.from);
    analysis_.on_call_wait([this](std::uint32_t loc, std::int64_t enter, std::int64_t wait) {
      efficiency_.call_wait(loc, enter, wait);
    });
  }
  /// Each wait of an MPI call or OpenMP construct as it is decided.
  void on_wait(analysis::WaitStateAnalysis::WaitObserver observer) {
    analysis_.on_wait(std::move(observer));
  }
  WaitStateSink(const WaitStateSink&) = delete;
  WaitStateSink& operator=(const WaitStateSink&) = delete;
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    const std::int64_t ns = defs_.ns_from_start(t);
    analysis_.enter(loc, ns, region);
    efficiency_.enter(loc, ns, region);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) override {
    const std::int64_t ns = defs_.ns_from_start(t);
    analysis_.leave(loc, ns);
    efficiency_.leave(loc, ns);
  }
  void send(std::uint32_t loc, std::uint64_t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t, std::uint64_t request) override {
    analysis_.send(loc, comm, defs_.member(comm, peer), tag, request);
  }
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t, std::uint64_t request) override {
    analysis_.recv(loc, defs_.ns_from_start(t), comm, defs_.member(comm, peer), tag, request);
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
  void thread_fork(std::uint32_t loc, std::uint64_t t) override {
    analysis_.thread_fork(loc, defs_.ns_from_start(t));
  }
  void thread_join(std::uint32_t loc, std::uint64_t t) override {
    analysis_.thread_join(loc, defs_.ns_from_start(t));
  }
  void team_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t team) override {
    analysis_.team_begin(loc, defs_.ns_from_start(t), team);
  }
  void team_end(std::uint32_t loc, std::uint64_t t, std::uint32_t team) override {
    analysis_.team_end(loc, defs_.ns_from_start(t), team);
  }
  void lock_acquire(std::uint32_t loc, std::uint64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order) override {
    analysis_.lock_acquire(loc, defs_.ns_from_start(t), model, lock, order);
  }
  void lock_release(std::uint32_t loc, std::uint64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order) override {
    analysis_.lock_release(loc, defs_.ns_from_start(t), model, lock, order);
  }
  void begin(bool time_order) override {
    if (time_order) analysis_.read_in_time_order();
  }
  void read_before(std::uint64_t t) override { analysis_.advance(defs_.ns_from_start(t)); }
  bool needs_time_order() const override { return false; }
  void prefetch(std::uint32_t loc) override {
    analysis_.prefetch(loc);
    efficiency_.prefetch(loc);
  }
  void finish() override {
    result.waits = analysis_.finish(); // decides the last waits, which the efficiency needs
    result.efficiency = efficiency_.finish();
  }

  RunAnalysis result; ///< valid after finish()

private:
  const ArchiveDefs& defs_;
  analysis::WaitStateAnalysis analysis_;
  analysis::EfficiencyAnalysis efficiency_;
};

} // namespace htrace::report
