// Run-time options of libhtrace, read once from HTRACE_* environment variables.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace htrace {

struct Options {
#define HTRACE_OPTION_TYPE_Bool bool
#define HTRACE_OPTION_TYPE_Int long
#define HTRACE_OPTION_TYPE_Size std::uint64_t
#define HTRACE_OPTION_TYPE_String std::string
#define HTRACE_OPTION(field, NAME, Kind, def, help) HTRACE_OPTION_TYPE_##Kind field{};
#include "common/options.def"
#undef HTRACE_OPTION
};

/// One row of the option table, for documentation and error messages.
struct OptionSpec {
  const char* env_name; ///< e.g. "HTRACE_BUFFER_SIZE"
  const char* kind;     ///< "Bool", "Int", "Size" or "String"
  const char* default_value;
  const char* help;
};
const std::vector<OptionSpec>& option_specs();

/// Result of parsing: either options or a message naming the variable and the problem.
struct OptionsResult {
  Options options;
  std::string error; ///< empty on success
  bool ok() const { return error.empty(); }
};

/// Parses all options; `getenv` returns nullptr for unset names (injectable for tests).
OptionsResult parse_options(const std::function<const char*(const char*)>& getenv);
OptionsResult parse_options_from_environment();
/// Every option at its default (what a malformed environment falls back to).
Options default_options();

/// Value parsers shared with other configuration strings; return false on malformed input.
bool parse_bool(const std::string& text, bool& out);
bool parse_size(const std::string& text, std::uint64_t& out);
bool parse_int(const std::string& text, long& out);

} // namespace htrace
