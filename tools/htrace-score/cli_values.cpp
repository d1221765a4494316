#include "cli_values.h"

#include "common/options.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace htrace::score {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

bool parse_byte_count(const std::string& text, std::uint64_t& bytes) {
  std::uint64_t v = 0;
  if (!parse_size(text, v) || v == 0) return false;
  bytes = v;
  return true;
}

bool parse_factor(const std::string& text, double& factor) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v <= 0) return false;
  factor = v;
  return true;
}

bool parse_duration(const std::string& text, double& seconds) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || !std::isfinite(v) || v <= 0) return false;
  const std::string unit = lower(end);
  double scale = 1;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "min")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else
    return false;
  seconds = v * scale;
  return true;
}

} // namespace htrace::score
