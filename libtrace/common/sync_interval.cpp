#include "common/sync_interval.h"

#include <cerrno>
#include <cstdlib>

namespace htrace {

std::optional<SyncInterval> parse_sync_interval(const std::string& text, std::string& error) {
  if (text == "auto") return SyncInterval{};
  errno = 0;
  char* end = nullptr;
  const long long ms = std::strtoll(text.c_str(), &end, 10);
  const bool digits_only = !text.empty() && text[0] >= '0' && text[0] <= '9' && *end == '\0';
  if (!digits_only || errno != 0 || ms > kMaxSyncIntervalMs) {
    error = "HTRACE_SYNC_INTERVAL_MS='" + text + "' is not auto or an integer in 0.." +
            std::to_string(kMaxSyncIntervalMs);
    return std::nullopt;
  }
  return SyncInterval{false, ms};
}

} // namespace htrace
