// HTRACE_SYNC_INTERVAL_MS: "auto" (the interval follows the clock, clock/run_interval.h) or a
// fixed interval in ms (0: no measurement during the run). Parsed with the other options, so a
// bad value follows their one policy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace htrace {

struct SyncInterval {
  bool adaptive = true;
  std::int64_t fixed_ms = 0;
};

constexpr std::int64_t kMaxSyncIntervalMs = 86'400'000;

/// The value, or nullopt with `error` saying what is accepted.
std::optional<SyncInterval> parse_sync_interval(const std::string& text, std::string& error);

} // namespace htrace
