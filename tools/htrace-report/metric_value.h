// A Metric record's value as the number it stands for, written as JSON text: the stored value
// (int64, uint64 or double, as the record's type says) times the member's base^exponent.
//
// Exact where the text can be: integers scaled by 10^-400 to 10^280 (the digits with the decimal
// point moved) or by up to 2^63 (the 128-bit product); otherwise the double nearest to the scaled
// value, written so that a reader parses back that double: doubles scaled by 10^e with |e| <= 22
// are rounded once (10^e is exact there), by 2^e not at all unless they overflow or underflow.
#pragma once

#include <cstdint>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>
#include <otf2/OTF2_GeneralDefinitions.h>
#include <string>

namespace htrace::report {

/// The value as a JSON number, or "" when there is none (NaN, infinities, or a type that is not
/// int64, uint64 or double).
std::string metric_value_json(OTF2_Type type, OTF2_MetricValue value, OTF2_Base base,
                              std::int64_t exponent);

} // namespace htrace::report
