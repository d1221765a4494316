// A logical global clock: a base time source with a chain of linear models on top (the nested
// GLOBALCLOCKLM of the papers). HCA3 adds one model per tree level; ClockPropSync ships the whole
// chain as bytes to ranks that read the same base clock, which rebuild it over their own source.
#pragma once

#include "clock/global_time_map.h"
#include "clock/linear_model.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace htrace::clock {

using TimeSource = std::function<std::int64_t()>;

class GlobalClock {
public:
  explicit GlobalClock(TimeSource base) : base_(std::move(base)) {}
  GlobalClock(TimeSource base, std::vector<LinearModel> models)
      : base_(std::move(base)), models_(std::move(models)) {}

  std::int64_t now() const { return to_global(base_()); }
  std::int64_t base_now() const { return base_(); }
  std::int64_t to_global(std::int64_t local) const;

  /// A new clock: this chain plus `model` (which was measured against this clock's readings).
  GlobalClock with(const LinearModel& model) const;
  const std::vector<LinearModel>& models() const { return models_; }
  const TimeSource& base() const { return base_; }

  /// One linear map equivalent to the chain, expanded around local time `origin_ns`.
  GlobalTimeMap to_time_map(std::int64_t origin_ns) const;

  std::vector<std::uint8_t> flatten() const;
  /// Rebuilds a flattened chain over `base`; false (and `error`) on a malformed buffer.
  static bool unflatten(const std::vector<std::uint8_t>& bytes, TimeSource base, GlobalClock& out,
                        std::string& error);

private:
  TimeSource base_;
  std::vector<LinearModel> models_;
};

} // namespace htrace::clock
