#include "json_text.h"

#include <cstdio>

namespace htrace::report {

std::string json_string(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '<': // keeps "</script>" out of the HTML report's embedded data
      out += "\\u003c";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += ch;
      }
    }
  }
  out += '"';
  return out;
}

void write_us(std::ostream& out, std::int64_t ns) {
  char buf[32];
  const bool negative = ns < 0;
  const std::uint64_t a = negative ? 0 - static_cast<std::uint64_t>(ns) : ns;
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", negative ? "-" : "",
                static_cast<unsigned long long>(a / 1000),
                static_cast<unsigned long long>(a % 1000));
  out << buf;
}

} // namespace htrace::report
