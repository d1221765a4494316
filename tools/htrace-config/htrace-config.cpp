// htrace-config: prints libhtrace's run-time options (from the one option table) and checks the
// current environment against them with libhtrace's own parser.
#include "cli.h"
#include "common/options.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

void print_list() {
  for (const htrace::OptionSpec& spec : htrace::option_specs()) {
    const char* current = std::getenv(spec.env_name);
    std::printf("%-32s %-13s default '%s'%s%s%s\n    %s\n", spec.env_name,
                spec.kind_label().c_str(), spec.default_value, current ? ", set to '" : "",
                current ? current : "", current ? "'" : "", spec.help);
  }
}

void print_markdown() {
  std::printf("| variable | kind | default | meaning |\n| --- | --- | --- | --- |\n");
  for (const htrace::OptionSpec& spec : htrace::option_specs())
    std::printf("| `%s` | %s | `%s` | %s |\n", spec.env_name, spec.kind_label().c_str(),
                spec.default_value, spec.help);
}

// What libhtrace would say about this environment, in this tool's voice.
void print_diagnostics(const htrace::OptionsResult& parsed, const char* error_label) {
  for (const std::string& warning : parsed.warnings)
    std::fprintf(stderr, "htrace-config: warning: %s\n", warning.c_str());
  if (!parsed.ok())
    std::fprintf(stderr, "htrace-config: %s: %s; a traced run would have tracing off\n",
                 error_label, parsed.error.c_str());
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app("Lists libhtrace's HTRACE_* options with their defaults and current values.",
               "htrace-config");
  htrace::cli::configure(app);
  bool check = false, markdown = false, mpi = false;
  app.add_flag("--check", check,
               "parse the environment as libhtrace does; exit 1 if it is invalid");
  app.add_flag("--markdown", markdown, "print the option table as Markdown (the README's table)");
  app.add_flag("--mpi", mpi, "print the MPI this htrace is built for and its preload library");
  app.footer("Without an option: every HTRACE_* variable with its default and current value.\n"
             "Exit status: 0 success, 1 invalid environment (--check), 2 usage error.");
  const htrace::cli::Outcome outcome = htrace::cli::parse(app, argc, argv, [&]() -> std::string {
    return check + markdown + mpi > 1 ? "--check, --markdown and --mpi exclude each other" : "";
  });
  if (!outcome.run()) return htrace::cli::report(outcome);

  if (markdown) {
    print_markdown();
    return 0;
  }
  if (mpi) {
    std::printf("%s (preload %s)\n", HTRACE_MPI_LIBRARY, HTRACE_PRELOAD_NAME);
    return 0;
  }
  const htrace::OptionsResult parsed = htrace::parse_options_from_environment();
  if (check) {
    print_diagnostics(parsed, "error");
    if (!parsed.ok()) return 1;
    std::puts("htrace-config: environment OK");
    return 0;
  }
  print_list();
  print_diagnostics(parsed, "warning");
  return 0;
}
