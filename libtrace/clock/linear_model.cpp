#include "clock/linear_model.h"

#include <cmath>

namespace htrace::clock {

std::int64_t LinearModel::offset_at(std::int64_t t) const {
  return offset_at_origin_ns + std::llround(slope * static_cast<double>(t - origin_ns));
}

LinearModel compose(const LinearModel& outer, const LinearModel& inner) {
  LinearModel m;
  m.origin_ns = inner.origin_ns;
  m.offset_at_origin_ns = inner.origin_ns - outer.to_reference(inner.to_reference(inner.origin_ns));
  // to_reference(t) = (1 - slope) * t + c for each model; the factors multiply.
  m.slope = 1.0 - (1.0 - outer.slope) * (1.0 - inner.slope);
  return m;
}

FitResult fit_linear_model(const std::vector<FitPoint>& points) {
  FitResult r;
  if (points.empty()) return r;
  const std::size_t n = points.size();
  // Centre on the first point before averaging: int64 ns since boot do not fit a double exactly.
  const std::int64_t x0 = points.front().time_ns, y0 = points.front().offset_ns;
  double mx = 0, my = 0;
  for (const auto& p : points) {
    mx += static_cast<double>(p.time_ns - x0);
    my += static_cast<double>(p.offset_ns - y0);
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (const auto& p : points) {
    const double dx = static_cast<double>(p.time_ns - x0) - mx;
    const double dy = static_cast<double>(p.offset_ns - y0) - my;
    sxx += dx * dx;
    sxy += dx * dy;
  }
  const double slope = sxx > 0 ? sxy / sxx : 0.0;
  r.model.origin_ns = x0 + std::llround(mx);
  r.model.slope = slope;
  r.model.offset_at_origin_ns =
      y0 + std::llround(my + slope * (static_cast<double>(r.model.origin_ns - x0) - mx));
  if (n >= 3 && sxx > 0) {
    double ssr = 0;
    for (const auto& p : points) {
      const double dx = static_cast<double>(p.time_ns - x0) - mx;
      const double res = static_cast<double>(p.offset_ns - y0) - my - slope * dx;
      ssr += res * res;
    }
    r.slope_stderr = std::sqrt(ssr / static_cast<double>(n - 2) / sxx);
  }
  return r;
}

} // namespace htrace::clock
