// Maps local base-clock nanoseconds to the global clock (world rank 0's clock) found by the
// synchronization in MPI_Init. A value type: copied into the recorder, applied when events are
// written to the archive (never on the per-event hot path).
#pragma once

#include <cmath>
#include <cstdint>

namespace htrace::clock {

/// global = local - (slope * (local - origin) + offset_at_origin)
/// Nested clock models (HCA3 over ClockPropSync ...) flatten into one such linear map.
struct GlobalTimeMap {
  std::int64_t origin_ns = 0; ///< local time the model is expanded around (keeps slope*dt small)
  std::int64_t offset_at_origin_ns = 0;
  double slope = 0.0; ///< drift of the local clock relative to the reference

  std::int64_t to_global(std::int64_t local_ns) const {
    const std::int64_t dt = local_ns - origin_ns;
    return local_ns - offset_at_origin_ns -
           static_cast<std::int64_t>(std::llround(slope * static_cast<double>(dt)));
  }
  bool is_identity() const { return offset_at_origin_ns == 0 && slope == 0.0; }
};

} // namespace htrace::clock
