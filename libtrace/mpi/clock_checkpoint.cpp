#include "mpi/clock_checkpoint.h"

#include "clock/base_clock.h"
#include "mpi/clock_lifecycle.h"

#include <algorithm>
#include <cstdint>

namespace htrace::mpi {
namespace {

/// At most this many world collectives between two votes.
constexpr std::int64_t kMaxStride = std::int64_t{1} << 20;
/// A vote's result meaning "measure now".
constexpr std::int64_t kMeasureNow = -1;

// Touched only inside world collectives, which MPI requires the application to serialize.
struct Pace {
  std::int64_t counted = 0;    ///< world collectives since MPI_Init
  std::int64_t next_vote = 1;  ///< the count at which the ranks vote next
  std::int64_t voted_at = 0;   ///< the count at the latest vote
  std::int64_t voted_ns = 0;   ///< base clock at the latest vote
  std::int64_t started_ns = 0; ///< base clock when counting began
};
Pace g_pace;

/// Collectives per ns from `count` collectives over `ns`.
double rate(std::int64_t count, std::int64_t ns) {
  return static_cast<double>(count) / static_cast<double>(std::max<std::int64_t>(1, ns));
}

/// This rank's proposal: measure now, or look again after half the collectives it expects
/// before its interval has passed. The pace is the slower of the one since the last vote and the
/// one since counting began: right after a measurement the next collective may follow at once (a
/// barrier and then a broadcast), and that one gap alone would put the next vote many intervals
/// late; a phase slower than the run so far is seen by the recent pace.
std::int64_t proposal(std::int64_t now_ns) {
  const std::int64_t due_in = run_measurement_due_in_ns(now_ns);
  if (due_in <= 0) return kMeasureNow;
  const double per_ns = std::min(rate(g_pace.counted - g_pace.voted_at, now_ns - g_pace.voted_ns),
                                 rate(g_pace.counted, now_ns - g_pace.started_ns));
  const double half = 0.5 * per_ns * static_cast<double>(due_in);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(half), 1, kMaxStride);
}

} // namespace

void start_clock_checkpoints() {
  if (run_measurement_due_in_ns(clock::now()) < 0) return;
  g_pace = Pace{};
  g_pace.voted_ns = g_pace.started_ns = clock::now();
  detail::g_checkpoints_on.store(true, std::memory_order_release);
}

void stop_clock_checkpoints() {
  detail::g_checkpoints_on.store(false, std::memory_order_release);
}

void detail::after_world_collective() {
  Pace& p = g_pace;
  if (++p.counted < p.next_vote) return;
  const std::int64_t now_ns = clock::now();
  const std::int64_t vote = vote_on_run_measurement(proposal(now_ns));
  if (vote == kMeasureNow) {
    measure_during_run();
    p.next_vote = p.counted + 1; // the pace is learnt again from here
  } else {
    p.next_vote = p.counted + vote;
  }
  p.voted_at = p.counted;
  p.voted_ns = clock::now();
}

} // namespace htrace::mpi
