// Linear clock model: the offset of a client clock to a reference clock as a line over the client's
// time, fitted by least squares from fit points. Integer ns for times and offsets; only the slope
// (dimensionless drift, ~1e-6) is a double, applied to differences from `origin_ns` so that the
// product stays small and exact enough.
#pragma once

#include <cstdint>
#include <vector>

namespace htrace::clock {

struct FitPoint {
  std::int64_t time_ns;   ///< client clock when the offset was measured
  std::int64_t offset_ns; ///< client clock minus reference clock
};

struct LinearModel {
  std::int64_t origin_ns = 0;
  std::int64_t offset_at_origin_ns = 0;
  double slope = 0.0;

  std::int64_t offset_at(std::int64_t t) const;
  /// The reference clock's reading at client time t.
  std::int64_t to_reference(std::int64_t t) const { return t - offset_at(t); }
};

/// The model equal to applying `inner` first, then `outer` (a client of a client of the root).
LinearModel compose(const LinearModel& outer, const LinearModel& inner);

struct FitResult {
  LinearModel model;
  double slope_stderr = 0.0; ///< standard error of the slope (0 with fewer than 3 points)
};
/// Least-squares line through the points; with one point (or all at one time) the slope is 0.
FitResult fit_linear_model(const std::vector<FitPoint>& points);

} // namespace htrace::clock
