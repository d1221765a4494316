// When the residual offsets are measured again during the run (HTRACE_SYNC_INTERVAL_MS): at a
// fixed interval when the user sets one, otherwise at an interval that follows the clock.
//
// The adaptive rule. Each measurement is predicted from the line through the first and the latest
// measurement since the clock last left its line; the prediction's rigorous bound is the two
// points' uncertainties carried along the line (extrapolation widens them), plus the new
// measurement's own. A measurement within that bound is on the line: the next interval is 1.5
// times this one (up to the ceiling). One outside it means the clock's rate has
// changed: the interval halves (down to the floor) and a new line starts at that measurement;
// the measurement after it only adds the line's second point. Why these numbers:
//  - start 2 s: the first slope is known after two short intervals, so a change early in the run
//    is seen within seconds, and a run of a few seconds already has measurements in it;
//  - floor 1 s: htrace-correct interpolates linearly between measurements, so a rate change of
//    R leaves at most R x interval / 4 (20 ppm at 1 s: 5 us) where it cannot find the kink; at
//    1 s a measurement (3-15 ms at 2-32 ranks) already costs 0.3-1.5 % of the time;
//  - ceiling 60 s: a steady run then measures about 17 times in 10 minutes (under 0.05 % of its
//    time at 15 ms each), and a rate change is seen at most a minute late; htrace-correct places
//    the kink between two measurements where the lines on either side cross;
//  - growth 1.5, not 2: an interval is then about a third of the run so far (doubling: all of
//    it), so a change at time T has its two points on the new line by about 1.5 T (doubling:
//    2.5 T); with doubling from 2 s, measurements at 30 and 62 s left a change at 32 s of a 61 s
//    run to MPI_Finalize's measurement alone.
// Plain arithmetic, no MPI: each rank runs it on its own measurements, and the ranks' earliest
// due time wins (clock_lifecycle.cpp).
#pragma once

#include <cstdint>
#include <optional>

namespace htrace::clock {

/// One measurement of this process's global clock against world rank 0's.
struct ClockSample {
  std::int64_t time_ns = 0;
  std::int64_t offset_ns = 0;
  std::int64_t uncertainty_ns = 0; ///< rigorous half width
};

struct IntervalRule {
  std::int64_t first_ns = 2'000'000'000;
  std::int64_t floor_ns = 1'000'000'000;
  std::int64_t ceiling_ns = 60'000'000'000;
};

class AdaptiveInterval {
public:
  enum class Verdict {
    Learning, ///< the line has one point only: nothing to predict from
    OnLine,   ///< the prediction held
    OffLine,  ///< the clock left its line
  };
  explicit AdaptiveInterval(const IntervalRule& rule = {})
      : rule_(rule), interval_ns_(rule.first_ns) {}

  /// Takes the latest measurement (the first one: MPI_Init's); interval_ns() is then the time
  /// to the next.
  Verdict add(const ClockSample& sample);
  std::int64_t interval_ns() const { return interval_ns_; }
  /// The prediction of the latest add() (when it had a line) and its tolerance.
  std::int64_t predicted_ns() const { return predicted_ns_; }
  std::int64_t tolerance_ns() const { return tolerance_ns_; }

private:
  IntervalRule rule_;
  std::int64_t interval_ns_;
  std::optional<ClockSample> first_, last_; ///< the current line
  std::int64_t predicted_ns_ = 0, tolerance_ns_ = 0;
};

} // namespace htrace::clock
