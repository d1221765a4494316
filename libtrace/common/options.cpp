#include "common/options.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace htrace {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_value(const std::string& text, bool& out) {
  return parse_bool(text, out);
}
bool parse_value(const std::string& text, long& out) {
  return parse_int(text, out);
}
bool parse_value(const std::string& text, std::uint64_t& out) {
  return parse_size(text, out);
}
bool parse_value(const std::string& text, std::string& out) {
  out = text;
  return true;
}

const char* expected_form(const char* kind) {
  std::string k = kind;
  if (k == "Bool") return "0/1, yes/no, on/off or true/false";
  if (k == "Int") return "an integer";
  if (k == "Size") return "a byte count such as 4096, 64k, 16M or 1G";
  return "a string";
}

} // namespace

bool parse_bool(const std::string& text, bool& out) {
  const std::string t = lower(text);
  if (t == "1" || t == "yes" || t == "on" || t == "true") return out = true, true;
  if (t == "0" || t == "no" || t == "off" || t == "false") return out = false, true;
  return false;
}

bool parse_int(const std::string& text, long& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

bool parse_size(const std::string& text, std::uint64_t& out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return false;
  std::string suffix = lower(end);
  if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
  std::uint64_t scale = 1;
  if (suffix == "k")
    scale = 1ull << 10;
  else if (suffix == "m")
    scale = 1ull << 20;
  else if (suffix == "g")
    scale = 1ull << 30;
  else if (!suffix.empty())
    return false;
  if (v > UINT64_MAX / scale) return false;
  out = v * scale;
  return true;
}

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> specs = {
#define HTRACE_OPTION(field, NAME, Kind, def, help) {"HTRACE_" #NAME, #Kind, def, help},
#include "common/options.def"
#undef HTRACE_OPTION
  };
  return specs;
}

OptionsResult parse_options(const std::function<const char*(const char*)>& getenv) {
  OptionsResult result;
#define HTRACE_OPTION(field, NAME, Kind, def, help)                                                \
  {                                                                                                \
    const char* raw = getenv("HTRACE_" #NAME);                                                     \
    const std::string text = raw ? raw : def;                                                      \
    if (!parse_value(text, result.options.field) && result.ok())                                   \
      result.error = "HTRACE_" #NAME "='" + text + "' is not " + expected_form(#Kind);             \
  }
#include "common/options.def"
#undef HTRACE_OPTION
  return result;
}

OptionsResult parse_options_from_environment() {
  return parse_options([](const char* name) { return std::getenv(name); });
}

Options default_options() {
  return parse_options([](const char*) -> const char* { return nullptr; }).options;
}

} // namespace htrace
