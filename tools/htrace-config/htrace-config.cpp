// htrace-config: prints libhtrace's run-time options (from the one option table) and checks the
// current environment against them.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/options.h"

namespace {

constexpr const char* kUsage =
    "usage: htrace-config [--check | --markdown | --help]\n"
    "  (no option)  list every HTRACE_* variable with its default and current value\n"
    "  --check      parse the current environment; exit 1 with the reason if it is invalid\n"
    "  --markdown   print the option table as Markdown (the README's table)\n";

void print_list() {
  for (const htrace::OptionSpec& spec : htrace::option_specs()) {
    const char* current = std::getenv(spec.env_name);
    std::printf("%-26s %-6s default '%s'%s%s%s\n    %s\n", spec.env_name, spec.kind,
                spec.default_value, current ? ", set to '" : "", current ? current : "",
                current ? "'" : "", spec.help);
  }
}

void print_markdown() {
  std::printf("| variable | kind | default | meaning |\n| --- | --- | --- | --- |\n");
  for (const htrace::OptionSpec& spec : htrace::option_specs())
    std::printf("| `%s` | %s | `%s` | %s |\n", spec.env_name, spec.kind, spec.default_value,
                spec.help);
}

} // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc > 2 || (!mode.empty() && mode != "--check" && mode != "--markdown" && mode != "--help")) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (mode == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (mode == "--markdown") {
    print_markdown();
    return 0;
  }
  const htrace::OptionsResult parsed = htrace::parse_options_from_environment();
  if (mode == "--check") {
    if (!parsed.ok()) {
      std::fprintf(stderr, "htrace-config: error: %s\n", parsed.error.c_str());
      return 1;
    }
    std::puts("htrace-config: environment OK");
    return 0;
  }
  print_list();
  if (!parsed.ok()) std::fprintf(stderr, "htrace-config: warning: %s\n", parsed.error.c_str());
  return 0;
}
