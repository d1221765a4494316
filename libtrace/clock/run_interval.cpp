#include "clock/run_interval.h"

#include <algorithm>
#include <cmath>

namespace htrace::clock {

AdaptiveInterval::Verdict AdaptiveInterval::add(const ClockSample& s) {
  if (!first_) {
    first_ = s;
    return Verdict::Learning;
  }
  if (!last_) {
    if (s.time_ns > first_->time_ns) last_ = s;
    return Verdict::Learning;
  }
  // The line through first_ and last_ at s.time_ns: weights a (first_) and b (last_), a + b = 1.
  const double span = static_cast<double>(last_->time_ns - first_->time_ns);
  const double b = static_cast<double>(s.time_ns - first_->time_ns) / span;
  const double a = 1.0 - b;
  const double predicted =
      a * static_cast<double>(first_->offset_ns) + b * static_cast<double>(last_->offset_ns);
  const double tolerance = std::abs(a) * static_cast<double>(first_->uncertainty_ns) +
                           std::abs(b) * static_cast<double>(last_->uncertainty_ns) +
                           static_cast<double>(s.uncertainty_ns);
  predicted_ns_ = std::llround(predicted);
  tolerance_ns_ = std::llround(std::ceil(tolerance));
  if (std::abs(static_cast<double>(s.offset_ns) - predicted) <= tolerance) {
    last_ = s;
    interval_ns_ = std::min(rule_.ceiling_ns, interval_ns_ + interval_ns_ / 2);
    return Verdict::OnLine;
  }
  first_ = s;
  last_.reset();
  interval_ns_ = std::max(rule_.floor_ns, interval_ns_ / 2);
  return Verdict::OffLine;
}

} // namespace htrace::clock
