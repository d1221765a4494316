// Run-time options of libhtrace: the HTRACE_* environment variables of the one table
// (options.def), parsed once per process by run_options() and handed to every module.
#pragma once

#include "common/region_filter.h"

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
#define HTRACE_OPTION(field, NAME, Kind, def, min, max, help) HTRACE_OPTION_TYPE_##Kind field{};
#include "common/options.def"
#undef HTRACE_OPTION
};

/// One row of the option table, for documentation and error messages.
struct OptionSpec {
  const char* env_name; ///< e.g. "HTRACE_BUFFER_SIZE"
  const char* kind;     ///< "Bool", "Int", "Size" or "String"
  const char* default_value;
  const char* help;
  long min = 0; ///< Int only: accepted range, inclusive
  long max = 0;

  /// What a value must look like, e.g. "an integer in 0..2" (the error messages' wording).
  std::string accepted_form() const;
  /// The kind with an Int's range, e.g. "Int 0..2" (the README table's kind column).
  std::string kind_label() const;
};
const std::vector<OptionSpec>& option_specs();

/// HTRACE_* variables that tests and tools set, never read by libhtrace: known, so no warning.
const std::vector<const char*>& non_library_variables();

/// The process environment as the parser sees it; injectable for tests.
struct Environment {
  std::function<const char*(const char*)> get; ///< value of a name, nullptr if unset
  std::vector<std::string> names;              ///< every name set (to find unknown HTRACE_*)
};
Environment process_environment();

/// Result of parsing. The one policy for a bad value lives here, so every consumer agrees on it:
/// a malformed or out-of-range value makes `options` the defaults with `enable` false (tracing off
/// for the whole run, MPIX_Harmonize on its defaults) but `log_file` as given (the error is
/// reported there too), and `error` says why.
struct OptionsResult {
  Options options;
  RegionFilter mpi_filter;           ///< the rules of HTRACE_FILTER_FILE (none when unset)
  std::string error;                 ///< the first bad value: variable, value, accepted form
  std::vector<std::string> warnings; ///< one per unknown HTRACE_* variable, with a suggestion
  bool ok() const { return error.empty(); }
};

/// Parses every option of the table from `env`, and the filter file HTRACE_FILTER_FILE names.
/// No caching, no output.
OptionsResult parse_options(const Environment& env);
/// parse_options(process_environment()): for htrace-config and tests; libhtrace uses run_options().
OptionsResult parse_options_from_environment();

/// The options of this process: parsed from the environment by the first caller (whichever of
/// MPI_Init, the recorder, ompt_start_tool and MPIX_Harmonize runs first; thread-safe) and the
/// same object for every later one, so all modules see one set of values. Reporting `error` and
/// `warnings` is the caller's job (MPI_Init does it, once per run).
const OptionsResult& run_options();

/// Every option at its default.
Options default_options();

/// The known name (option or non-library variable) nearest to `name` by edit distance.
std::string closest_known_variable(const std::string& name);

/// Value parsers shared with other configuration strings; return false on malformed input.
bool parse_bool(const std::string& text, bool& out);
bool parse_size(const std::string& text, std::uint64_t& out);
bool parse_int(const std::string& text, long& out);

} // namespace htrace
