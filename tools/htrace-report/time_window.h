// The --window argument: "T0:T1", two times from the trace start, each a decimal number with an
// optional unit (s, ms, us or ns; seconds without one), e.g. "0.5:0.6" or "500ms:600ms".
#pragma once

#include <cstdint>
#include <string>

namespace htrace::report {

/// Parses `text` into [begin_ns, end_ns] (rounded to the nearest ns); false unless it is T0:T1 with
/// 0 <= T0 < T1.
bool parse_window(const std::string& text, std::int64_t& begin_ns, std::int64_t& end_ns);

} // namespace htrace::report
