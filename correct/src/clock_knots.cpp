#include "correct/clock_knots.h"

#include <algorithm>
#include <cmath>

namespace htrace::correct {
namespace {

/// A clock whose midpoints scatter by `expected` is taken to have left a line only when a
/// measurement lies this many times that far from it: a line through two neighbours extrapolated
/// one gap on carries their scatter about three times.
constexpr double kScatterFactor = 4.0;
/// ... and never for less: clock reading and rounding, a few ns, and the scatter's estimate from a
/// handful of measurements.
constexpr double kLeastDeparture = 250.0;

/// The line through a and b, in time relative to `origin`.
struct Line {
  double t0, o0, slope;

  Line(const ClockMeasurement& a, const ClockMeasurement& b, int64_t origin)
      : t0(double(a.time - origin)), o0(double(a.offset)),
        slope(double(b.offset - a.offset) / double(b.time - a.time)) {}
  double at(double t) const { return o0 + slope * (t - t0); }
};

} // namespace

std::vector<ClockKnot> knots_of(const std::vector<ClockMeasurement>& m) {
  const double departure =
      std::max(kLeastDeparture, kScatterFactor * double(expected_clock_error(m)));
  std::vector<ClockKnot> knots;
  for (size_t i = 0; i < m.size(); ++i) {
    knots.push_back({m[i].time, m[i].offset});
    if (i < 1 || i + 2 >= m.size()) continue;
    // The gap from m[i] to m[i + 1], in time relative to m[i].
    const int64_t origin = m[i].time;
    const Line before(m[i - 1], m[i], origin), after(m[i + 1], m[i + 2], origin);
    const double gap = double(m[i + 1].time - origin);
    if (std::abs(double(m[i + 1].offset) - before.at(gap)) <= departure ||
        std::abs(double(m[i].offset) - after.at(0.0)) <= departure || before.slope == after.slope)
      continue;
    const double crossing = (after.at(0.0) - before.at(0.0)) / (before.slope - after.slope);
    if (!(crossing > 0.0 && crossing < gap)) continue;
    knots.push_back({origin + std::llround(crossing), std::llround(before.at(crossing))});
  }
  return knots;
}

int64_t expected_clock_error(const std::vector<ClockMeasurement>& m) {
  if (m.size() < 3) return -1;
  std::vector<double> distance;
  for (size_t i = 1; i + 1 < m.size(); ++i) {
    const double w = double(m[i].time - m[i - 1].time) / double(m[i + 1].time - m[i - 1].time);
    const double between = double(m[i - 1].offset) + w * double(m[i + 1].offset - m[i - 1].offset);
    distance.push_back(std::abs(double(m[i].offset) - between));
  }
  std::nth_element(distance.begin(), distance.begin() + distance.size() / 2, distance.end());
  return std::llround(distance[distance.size() / 2]);
}

} // namespace htrace::correct
