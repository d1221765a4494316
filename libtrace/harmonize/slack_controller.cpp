#include "harmonize/slack_controller.h"

#include <algorithm>
#include <cmath>

namespace htrace::harmonize {

namespace {
constexpr std::int64_t kDefaultSlackNs = 100000; // before anything is measured: 100 us
constexpr std::int64_t kMaxSlackNs = 1000000000; // 1 s: beyond that the communicator is broken
} // namespace

SlackController::SlackController(const SlackParameters& parameters)
    : parameters_(parameters),
      slack_ns_(parameters.initial_ns > 0 ? parameters.initial_ns : kDefaultSlackNs) {
  if (!(parameters_.grow_factor > 1.0)) parameters_.grow_factor = 1.5;
  if (!(parameters_.shrink_factor > 0.0) || parameters_.shrink_factor > 1.0)
    parameters_.shrink_factor = 0.9;
  if (parameters_.shrink_after < 1) parameters_.shrink_after = 1;
}

void SlackController::set_measured_floor(std::int64_t floor_ns) {
  floor_ns_ = std::max<std::int64_t>(floor_ns, 1000);
  if (parameters_.initial_ns <= 0) slack_ns_ = 2 * floor_ns_;
  slack_ns_ = std::max(slack_ns_, floor_ns_);
}

void SlackController::record_round(bool every_rank_met_deadline) {
  if (!every_rank_met_deadline) {
    streak_ = 0;
    const double grown = std::ceil(static_cast<double>(slack_ns_) * parameters_.grow_factor);
    slack_ns_ = std::min<std::int64_t>(static_cast<std::int64_t>(grown), kMaxSlackNs);
    return;
  }
  if (++streak_ < parameters_.shrink_after) return;
  streak_ = 0;
  const double shrunk = static_cast<double>(slack_ns_) * parameters_.shrink_factor;
  slack_ns_ = std::max(static_cast<std::int64_t>(shrunk), floor_ns_);
}

} // namespace htrace::harmonize
