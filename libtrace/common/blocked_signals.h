// Signals blocked on the calling thread while an object lives; the previous mask comes back when
// it ends. Threads started meanwhile inherit the mask: around MPI_Init, MPI's own progress and
// event threads are born with the signals blocked, so a signal sent to the process is handled on
// an application thread. Header-only: the preloaded library and the tools both use it.
#pragma once

#include <csignal>
#include <initializer_list>
#include <pthread.h>

namespace htrace {

class BlockedSignals {
public:
  /// Blocks `signals` unless `active` is false (then it changes nothing).
  explicit BlockedSignals(std::initializer_list<int> signals, bool active = true) {
    if (!active) return;
    sigset_t set;
    sigemptyset(&set);
    for (int sig : signals)
      sigaddset(&set, sig);
    block(set);
  }
  explicit BlockedSignals(const sigset_t& set) { block(set); }
  ~BlockedSignals() {
    if (blocked_) pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

private:
  void block(const sigset_t& set) { blocked_ = pthread_sigmask(SIG_BLOCK, &set, &previous_) == 0; }

  sigset_t previous_;
  bool blocked_ = false;
};

} // namespace htrace
