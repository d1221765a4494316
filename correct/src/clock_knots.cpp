#include "correct/clock_knots.h"

#include <algorithm>
#include <cmath>

namespace htrace::correct {
namespace {

/// The line through a and b, in time relative to `origin`, and the rigorous bound of its value
/// at t: each point's uncertainty weighted as the point weighs there (extrapolation widens it).
struct Line {
  double t0, o0, slope;
  double u_a, u_b, t_a, t_b;

  Line(const ClockMeasurement& a, const ClockMeasurement& b, int64_t origin)
      : t0(double(a.time - origin)), o0(double(a.offset)),
        slope(double(b.offset - a.offset) / double(b.time - a.time)), u_a(double(a.uncertainty)),
        u_b(double(b.uncertainty)), t_a(double(a.time - origin)), t_b(double(b.time - origin)) {}
  double at(double t) const { return o0 + slope * (t - t0); }
  double bound_at(double t) const {
    const double w_b = (t - t_a) / (t_b - t_a);
    return std::abs(1.0 - w_b) * u_a + std::abs(w_b) * u_b;
  }
  /// Whether measurement m (time relative to the origin: t) lies off this line beyond the bounds.
  bool misses(const ClockMeasurement& m, double t) const {
    return std::abs(double(m.offset) - at(t)) > bound_at(t) + double(m.uncertainty);
  }
};

} // namespace

std::vector<ClockKnot> knots_of(const std::vector<ClockMeasurement>& m) {
  std::vector<ClockKnot> knots;
  for (size_t i = 0; i < m.size(); ++i) {
    knots.push_back({m[i].time, m[i].offset});
    if (i < 1 || i + 2 >= m.size()) continue;
    // The gap from m[i] to m[i + 1], in time relative to m[i].
    const int64_t origin = m[i].time;
    const Line before(m[i - 1], m[i], origin), after(m[i + 1], m[i + 2], origin);
    const double gap = double(m[i + 1].time - origin);
    if (!before.misses(m[i + 1], gap) || !after.misses(m[i], 0.0)) continue;
    if (before.slope == after.slope) continue;
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
