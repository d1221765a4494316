// htrace-salvage: turns what a run that ended badly left on disk (MPI_Abort, a signal, a batch
// time limit, SIGKILL, a full disk) into an archive every OTF2 reader opens. Thin driver over
// salvage.cpp and summary.cpp.
#include "cli.h"
#include "salvage.h"
#include "summary.h"

#include <csignal>
#include <cstdio>
#include <string>

namespace {

const char* const kDescription =
    "Rebuilds a readable OTF2 archive from a libhtrace archive whose run did not reach "
    "MPI_Finalize (MPI_Abort, a signal, a time limit, SIGKILL, a full disk). Every event the "
    "processes flushed is kept; ranks that were cut off end with a region naming the cause.";

const char* const kExitCodes =
    "Exit codes: 0 success; 2 usage error;\n"
    "3 bad input (IN has no salvage files, or they are damaged; nothing written);\n"
    "4 output error (OUT exists, cannot be created or written, disk full; IN untouched);\n"
    "5 internal error.";

} // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) must fail the write that crosses it, reported like a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app(kDescription, "htrace-salvage");
  htrace::cli::configure(app);
  app.footer(kExitCodes);
  htrace::salvage::Options options;
  app.add_option("IN", options.input, "archive directory of the failed run (never modified)");
  app.add_option("OUT", options.output, "new archive directory (written atomically)");
  const htrace::cli::Outcome outcome = htrace::cli::parse(app, argc, argv, [&]() -> std::string {
    return options.input.empty() || options.output.empty() ? "expected IN and OUT" : "";
  });
  if (!outcome.run()) return htrace::cli::report(outcome);
  try {
    htrace::salvage::print_summary(htrace::salvage::salvage_archive(options), options.output);
    return htrace::kExitSuccess;
  } catch (const htrace::Error& e) {
    std::fprintf(stderr, "htrace-salvage: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "htrace-salvage: internal error: %s\n", e.what());
    return htrace::kExitInternal;
  }
}
