// Correction ranks simulated inside one process for unit tests of the replay: every rank is a
// thread, and every collective is a rendezvous (all ranks deposit their data, meet, read what they
// need, meet again), so results never depend on thread timing.
#ifndef HTRACE_TESTS_CORRECT_SIMULATED_RANKS_H
#define HTRACE_TESTS_CORRECT_SIMULATED_RANKS_H

#include "correct/rank_group.h"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace htrace::correct::testing {

// Thrown in a rank that waits in a collective another rank will never join (it failed or
// returned): the test then fails instead of hanging.
class RanksAbandoned : public std::runtime_error {
public:
  RanksAbandoned()
      : std::runtime_error("a simulated rank left while others wait in a collective") {}
};

class SimulatedRanks {
public:
  explicit SimulatedRanks(int size);

  // Runs body(group) on one thread per rank and joins them. Returns each rank's exception (null
  // where body returned).
  std::vector<std::exception_ptr> run(const std::function<void(RankGroup&)>& body);

private:
  friend class SimulatedRankGroup;
  // Waits until every rank arrived; throws RanksAbandoned if one left instead.
  void meet();
  void leave();

  const int size_;
  std::mutex mutex_;
  std::condition_variable met_;
  int waiting_ = 0, left_ = 0;
  uint64_t meetings_ = 0;
  // Per rank: what it contributes to the current collective (valid between its two meetings).
  std::vector<const void*> deposits_;
};

} // namespace htrace::correct::testing
#endif
