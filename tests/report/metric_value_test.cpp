// metric_value_json: the text of a scaled metric value, on the edges the Score-P-layout archive of
// report_scorep does not reach (its values are checked there against the otf2 Python reader).
#include "metric_value.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <string>

namespace htrace::report {
namespace {

std::string of_int(std::int64_t v, OTF2_Base base, std::int64_t exponent) {
  OTF2_MetricValue value;
  value.signed_int = v;
  return metric_value_json(OTF2_TYPE_INT64, value, base, exponent);
}

std::string of_uint(std::uint64_t v, OTF2_Base base, std::int64_t exponent) {
  OTF2_MetricValue value;
  value.unsigned_int = v;
  return metric_value_json(OTF2_TYPE_UINT64, value, base, exponent);
}

std::string of_double(double v, OTF2_Base base, std::int64_t exponent) {
  OTF2_MetricValue value;
  value.floating_point = v;
  return metric_value_json(OTF2_TYPE_DOUBLE, value, base, exponent);
}

TEST(MetricValue, IntegersWithADecimalExponentAreExactDigits) {
  EXPECT_EQ(of_int(45250, OTF2_BASE_DECIMAL, -3), "45.25");
  EXPECT_EQ(of_int(-1500, OTF2_BASE_DECIMAL, -3), "-1.5");
  EXPECT_EQ(of_int(7, OTF2_BASE_DECIMAL, -3), "0.007");
  EXPECT_EQ(of_int(0, OTF2_BASE_DECIMAL, -3), "0");
  EXPECT_EQ(of_int(12, OTF2_BASE_DECIMAL, 3), "12000");
  EXPECT_EQ(of_int(std::numeric_limits<std::int64_t>::min(), OTF2_BASE_DECIMAL, 0),
            "-9223372036854775808");
  EXPECT_EQ(of_uint(std::numeric_limits<std::uint64_t>::max(), OTF2_BASE_DECIMAL, -19),
            "1.8446744073709551615");
}

TEST(MetricValue, IntegersWithABinaryExponentAreExactUpTo2To63) {
  EXPECT_EQ(of_uint(3, OTF2_BASE_BINARY, 10), "3072");
  EXPECT_EQ(of_uint(std::numeric_limits<std::uint64_t>::max(), OTF2_BASE_BINARY, 63),
            "170141183460469231722463931679029329920");
  EXPECT_EQ(of_int(-1, OTF2_BASE_BINARY, 1), "-2");
  EXPECT_EQ(of_uint(3, OTF2_BASE_BINARY, -1), "1.5"); // through a double: still exact
}

TEST(MetricValue, DoublesReadBackAsTheNearestDouble) {
  EXPECT_EQ(of_double(187.25, OTF2_BASE_DECIMAL, 0), "187.25");
  EXPECT_EQ(std::stod(of_double(98765.4321, OTF2_BASE_DECIMAL, -3)), 98765.4321 / 1000);
  EXPECT_EQ(of_double(0.75, OTF2_BASE_BINARY, 2), "3");
}

TEST(MetricValue, NoTextForWhatJsonCannotHold) {
  EXPECT_EQ(of_double(std::nan(""), OTF2_BASE_DECIMAL, 0), "");
  EXPECT_EQ(of_double(std::numeric_limits<double>::infinity(), OTF2_BASE_DECIMAL, 0), "");
  EXPECT_EQ(of_double(1e300, OTF2_BASE_DECIMAL, 20), ""); // overflows
  EXPECT_EQ(of_uint(1, OTF2_BASE_DECIMAL, 400), "");      // beyond a double's range
  OTF2_MetricValue value;
  value.unsigned_int = 1;
  EXPECT_EQ(metric_value_json(OTF2_TYPE_UINT32, value, OTF2_BASE_DECIMAL, 0), "");
}

} // namespace
} // namespace htrace::report
