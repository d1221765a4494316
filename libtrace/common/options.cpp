#include "common/options.h"

#include "common/sync_interval.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ; // POSIX; not declared by <unistd.h> without _GNU_SOURCE on every libc

namespace htrace {
namespace {

constexpr const char kPrefix[] = "HTRACE_";

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One overload per Kind of the table; the spec carries what a kind needs beyond the text (the
// range of an Int), so every type follows the same rule: parse all of it, or it is a bad value.
bool parse_value(const std::string& text, const OptionSpec&, bool& out) {
  return parse_bool(text, out);
}
bool parse_value(const std::string& text, const OptionSpec& spec, long& out) {
  long v = 0;
  if (!parse_int(text, v) || v < spec.min || v > spec.max) return false;
  out = v;
  return true;
}
bool parse_value(const std::string& text, const OptionSpec&, std::uint64_t& out) {
  return parse_size(text, out);
}
bool parse_value(const std::string& text, const OptionSpec&, std::string& out) {
  out = text;
  return true;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

bool is_known_variable(const std::string& name) {
  for (const OptionSpec& spec : option_specs())
    if (name == spec.env_name) return true;
  for (const char* known : non_library_variables())
    if (name == known) return true;
  return false;
}

std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names) {
  std::vector<std::string> warnings;
  for (const std::string& name : names)
    if (name.rfind(kPrefix, 0) == 0 && !is_known_variable(name))
      warnings.push_back(name + ": unknown option; did you mean " + closest_known_variable(name) +
                         "?");
  return warnings;
}

// Which row a field belongs to, for the parser below (the table's order).
enum class Row : std::size_t {
#define HTRACE_OPTION(field, NAME, Kind, def, min, max, help) field,
#include "common/options.def"
#undef HTRACE_OPTION
};

} // namespace

std::string OptionSpec::accepted_form() const {
  const std::string k = kind;
  if (k == "Bool") return "0/1, yes/no, on/off or true/false";
  if (k == "Int") return "an integer in " + std::to_string(min) + ".." + std::to_string(max);
  if (k == "Size") return "a byte count such as 4096, 64k, 16M or 1G";
  return "a string";
}

std::string OptionSpec::kind_label() const {
  if (std::string(kind) != "Int") return kind;
  return std::string(kind) + " " + std::to_string(min) + ".." + std::to_string(max);
}

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
  else if (suffix == "t")
    scale = 1ull << 40;
  else if (!suffix.empty())
    return false;
  if (v > UINT64_MAX / scale) return false;
  out = v * scale;
  return true;
}

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> specs = {
#define HTRACE_OPTION(field, NAME, Kind, def, min, max, help)                                      \
  {"HTRACE_" #NAME, #Kind, def, help, min, max},
#include "common/options.def"
#undef HTRACE_OPTION
  };
  return specs;
}

const std::vector<const char*>& non_library_variables() {
  static const std::vector<const char*> names = {
      // tests/HtraceTesting.cmake gives every test these paths.
      "HTRACE_LIB", "HTRACE_BUILD_DIR", "HTRACE_SOURCE_DIR", "HTRACE_PYTHON", "HTRACE_CLUSTER_RUN",
      "HTRACE_MPI_FLAVOR", "HTRACE_MPI_SUFFIX",
      // tests/cluster/htrace-cluster-run: the emulated nodes (ground truth for htrace-clockcheck).
      "HTRACE_CLUSTER_OFFSETS", "HTRACE_CLUSTER_RANKS_PER_NODE", "HTRACE_TIMENS_EXEC",
      // The clock tests' rate shim and error bound.
      "HTRACE_TEST_CLOCK_RATES", "HTRACE_TEST_CLOCK_RATE_STEPS", "HTRACE_TEST_CLOCK_RANK_OFFSETS",
      "HTRACE_CLOCK_TEST_BOUND_NS",
      // Test drivers: tools under test, examples, kept files.
      "HTRACE_CORRECT", "HTRACE_LIBOMP", "HTRACE_EXAMPLES_DIR", "HTRACE_FIDELITY_TOOLS",
      "HTRACE_FIDELITY_KEEP", "HTRACE_KEEP_TEST_FILES",
      // bench/correct/correct_process_bench: an older htrace-correct to alternate with.
      "HTRACE_CORRECT_BASELINE"};
  return names;
}

std::string closest_known_variable(const std::string& name) {
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  auto consider = [&](const char* candidate) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  };
  for (const OptionSpec& spec : option_specs())
    consider(spec.env_name);
  for (const char* known : non_library_variables())
    consider(known);
  return best;
}

Environment process_environment() {
  Environment env;
  env.get = [](const char* name) { return std::getenv(name); };
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq != nullptr) env.names.emplace_back(*entry, static_cast<std::size_t>(eq - *entry));
  }
  return env;
}

namespace {

// Every row of the table from `env`, with no policy applied (default_options() needs exactly this).
OptionsResult parse_rows(const Environment& env) {
  OptionsResult result;
  const std::vector<OptionSpec>& specs = option_specs();
#define HTRACE_OPTION(field, NAME, Kind, def, min, max, help)                                      \
  {                                                                                                \
    const OptionSpec& spec = specs[static_cast<std::size_t>(Row::field)];                          \
    const char* raw = env.get ? env.get(spec.env_name) : nullptr;                                  \
    const std::string text = raw ? raw : def;                                                      \
    if (!parse_value(text, spec, result.options.field) && result.ok())                             \
      result.error =                                                                               \
          std::string(spec.env_name) + "='" + text + "' is not " + spec.accepted_form();           \
  }
#include "common/options.def"
#undef HTRACE_OPTION
  return result;
}

} // namespace

OptionsResult parse_options(const Environment& env) {
  OptionsResult result = parse_rows(env);
  result.warnings = unknown_variable_warnings(env.names);
  if (result.ok() && !result.options.filter_file.empty()) {
    RegionFilterResult filter = read_region_filter(result.options.filter_file);
    if (filter.ok())
      result.mpi_filter = std::move(filter.filter);
    else
      result.error = "HTRACE_FILTER_FILE='" + result.options.filter_file + "': " + filter.error;
  }
  std::string interval_error;
  if (result.ok() && !parse_sync_interval(result.options.sync_interval_ms, interval_error))
    result.error = interval_error;
  if (!result.ok()) { // the one policy for a bad value (see options.h)
    // The log file stays: it is where the run says why it is untraced.
    const std::string log_file = result.options.log_file;
    result.options = default_options();
    result.options.enable = false;
    result.options.log_file = log_file;
  }
  return result;
}

OptionsResult parse_options_from_environment() {
  return parse_options(process_environment());
}

const OptionsResult& run_options() {
  // A function-local static: C++ runs the initializer exactly once even when several threads
  // arrive together (libomp's initial thread in ompt_start_tool and the main thread in MPI_Init).
  // Leaked on purpose: threads may still read options while the process exits.
  static const OptionsResult* const parsed = new OptionsResult(parse_options_from_environment());
  return *parsed;
}

Options default_options() {
  return parse_rows(Environment{}).options;
}

} // namespace htrace
