// Small JSON text helpers shared by the exports (no JSON library: the exports stream their
// output record by record, and these are the only two things they need).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace htrace::report {

/// `s` as a JSON string literal (quotes included).
std::string json_string(const std::string& s);

/// Writes `ns` nanoseconds as microseconds with exactly three decimals ("12.345"): the decimal
/// text is exact, and a reader parsing it as a double recovers the integer nanoseconds (rounded
/// to nearest) for any value below 2^53 ns (104 days).
void write_us(std::ostream& out, std::int64_t ns);

} // namespace htrace::report
