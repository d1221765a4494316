// The values htrace-score's options take: a byte count (--limit) and a duration (--seconds).
#pragma once

#include <cstdint>
#include <string>

namespace htrace::score {

/// A byte count as libhtrace's sizes are written: digits and an optional k, M, G or T (powers of
/// 1024, any case, an optional trailing B): 500000, 64k, 2G, 1.5T is not (whole numbers only).
/// False for anything else, 0, or more than 2^64 - 1.
bool parse_byte_count(const std::string& text, std::uint64_t& bytes);

/// A positive duration: seconds as a decimal number, or with a unit s, min or h (90, 1.5h,
/// 30min). False for anything else.
bool parse_duration(const std::string& text, double& seconds);

/// A positive decimal number (2, 0.5, 12.5). False for anything else.
bool parse_factor(const std::string& text, double& factor);

} // namespace htrace::score
