// The adaptive slack of MPIX_Harmonize: how far in the future the root places a deadline.
// Grows after a round in which any rank missed the deadline; unlike the reference implementation it
// also shrinks again after a run of rounds that every rank met, so one noisy moment does not make
// every later call slow. Pure logic (no MPI), so it is unit-tested on its own.
#pragma once

#include <cstdint>

namespace htrace::harmonize {

struct SlackParameters {
  std::int64_t initial_ns = 0; ///< 0: derive from the measured round trip (set_measured_floor)
  double grow_factor = 1.5;    ///< applied after a missed round (> 1)
  double shrink_factor = 0.9;  ///< applied after `shrink_after` successful rounds (in (0, 1])
  long shrink_after = 16;
};

class SlackController {
public:
  explicit SlackController(const SlackParameters& parameters);

  /// Called once the collective round trip is known: the slack never goes below `floor_ns`, and
  /// starts at twice it unless an initial slack was configured.
  void set_measured_floor(std::int64_t floor_ns);

  /// Outcome of the previous round, as agreed by all ranks (the root learns it in the reduction).
  void record_round(bool every_rank_met_deadline);

  std::int64_t slack_ns() const { return slack_ns_; }
  std::int64_t floor_ns() const { return floor_ns_; }
  long success_streak() const { return streak_; }

private:
  SlackParameters parameters_;
  std::int64_t slack_ns_;
  std::int64_t floor_ns_ = 1000; // 1 us: a deadline closer than that is noise
  long streak_ = 0;
};

} // namespace htrace::harmonize
