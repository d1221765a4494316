#include "time_window.h"

#include <cmath>
#include <cstdlib>

namespace htrace::report {
namespace {

/// One time ("0.5", "500ms", "12us", "300ns") in ns; false if malformed or negative.
bool parse_time(const std::string& s, std::int64_t& ns) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return false;
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  if (scale == 0 || !std::isfinite(v) || v < 0 || v * scale > 9.2e18) return false;
  // Rounded to nearest: "0.0003" is 300000 ns, not 299999.
  ns = std::llround(v * scale);
  return true;
}

} // namespace

bool parse_window(const std::string& text, std::int64_t& begin_ns, std::int64_t& end_ns) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return false;
  return parse_time(text.substr(0, colon), begin_ns) &&
         parse_time(text.substr(colon + 1), end_ns) && begin_ns < end_ns;
}

} // namespace htrace::report
