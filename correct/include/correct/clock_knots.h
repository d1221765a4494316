// The knots of the piecewise clock-offset model (Presync::knots) from htrace's clock
// measurements, and what the measurements say about the model's error.
#pragma once

#include "correct/definitions.h"
#include "correct/model.h"

#include <vector>

namespace htrace::correct {

/// One knot per measurement, in time order, plus one where the clock changed its rate between two
/// measurements: where the line through the two measurements before the gap and the line through
/// the two after it each miss the other side's nearer measurement by more than 4 times the
/// midpoints' scatter (expected_clock_error, at least 250 ns), and the two lines cross inside the
/// gap, the knot goes at the crossing. A rate step inside the gap is then followed exactly, where
/// the straight piece across the gap would be off by up to the step times a quarter of the gap.
/// The scatter, not the rigorous bounds, decides: the bounds are half a round trip (6.5 us on
/// loopback TCP), the midpoints' error tens of ns, and a step that a bound hides still leaves
/// microseconds. A knot placed where no step was moves the offset by less than that threshold.
std::vector<ClockKnot> knots_of(const std::vector<ClockMeasurement>& m);

/// The expected error of the model from the measurements' midpoints, not a bound: the median
/// distance of each inner measurement from the straight piece through its two neighbours
/// (which a rate change between them puts far off: the median ignores a few). -1 with fewer
/// than three measurements.
int64_t expected_clock_error(const std::vector<ClockMeasurement>& m);

} // namespace htrace::correct
