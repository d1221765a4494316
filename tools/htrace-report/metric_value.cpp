#include "metric_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace htrace::report {
namespace {

// Integers scaled by 10^e are written digit by digit for e in this range: below it the text
// would only grow, above it the value (up to 1.8 * 10^19 * 10^e) could exceed a double's range,
// which JSON readers parse into.
constexpr std::int64_t kMinDecimalShift = -400, kMaxDecimalShift = 280;

std::string decimal(unsigned __int128 v) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v);
  return digits;
}

/// `digits` (a decimal integer) times 10^exponent, exactly.
std::string shifted(std::string digits, std::int64_t exponent) {
  if (digits == "0") return digits;
  if (exponent >= 0) return digits + std::string(static_cast<std::size_t>(exponent), '0');
  const auto point = static_cast<std::size_t>(-exponent);
  if (digits.size() <= point) digits.insert(0, point - digits.size() + 1, '0');
  digits.insert(digits.size() - point, ".");
  while (digits.back() == '0')
    digits.pop_back();
  if (digits.back() == '.') digits.pop_back();
  return digits;
}

std::string double_text(double d) {
  if (!std::isfinite(d)) return "";
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, d).ptr; // shortest that reads back as d
  return std::string(buf, end);
}

double scaled(double d, OTF2_Base base, std::int64_t exponent) {
  if (base == OTF2_BASE_BINARY)
    return std::ldexp(d, static_cast<int>(std::clamp<std::int64_t>(exponent, -4000, 4000)));
  if (exponent >= 0 && exponent <= 22) return d * std::pow(10.0, static_cast<double>(exponent));
  if (exponent < 0 && exponent >= -22) return d / std::pow(10.0, static_cast<double>(-exponent));
  return d * std::pow(10.0, static_cast<double>(exponent));
}

std::string integer_text(bool negative, std::uint64_t magnitude, double as_double, OTF2_Base base,
                         std::int64_t exponent) {
  const std::string sign = negative && magnitude ? "-" : "";
  if (base == OTF2_BASE_DECIMAL && exponent >= kMinDecimalShift && exponent <= kMaxDecimalShift)
    return sign + shifted(decimal(magnitude), exponent);
  if (base == OTF2_BASE_BINARY && exponent >= 0 && exponent <= 63)
    return sign + decimal(static_cast<unsigned __int128>(magnitude) << exponent);
  return double_text(scaled(as_double, base, exponent));
}

} // namespace

std::string metric_value_json(OTF2_Type type, OTF2_MetricValue value, OTF2_Base base,
                              std::int64_t exponent) {
  switch (type) {
  case OTF2_TYPE_UINT64:
    return integer_text(false, value.unsigned_int, static_cast<double>(value.unsigned_int), base,
                        exponent);
  case OTF2_TYPE_INT64: {
    const std::int64_t v = value.signed_int;
    // The magnitude of INT64_MIN does not fit an int64: negate in unsigned arithmetic.
    const std::uint64_t magnitude =
        v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    return integer_text(v < 0, magnitude, static_cast<double>(v), base, exponent);
  }
  case OTF2_TYPE_DOUBLE:
    return double_text(scaled(value.floating_point, base, exponent));
  default:
    return "";
  }
}

} // namespace htrace::report
