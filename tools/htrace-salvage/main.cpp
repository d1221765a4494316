// htrace-salvage: turns what a run that ended badly left on disk (MPI_Abort, a signal, a batch
// time limit, SIGKILL, a full disk) into an archive every OTF2 reader opens. Thin driver over
// salvage.cpp.
#include "cli.h"
#include "salvage.h"

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

void print_summary(const htrace::salvage::Result& r, const std::string& out) {
  std::uint64_t events = 0;
  for (const auto& rank : r.ranks) {
    std::uint64_t copied = 0, closed = 0, cut_locations = 0;
    std::string damaged;
    for (const auto& loc : rank.locations) {
      copied += loc.events;
      closed += loc.closed;
      if (loc.events && !rank.finished) ++cut_locations;
      if (loc.file_damaged)
        damaged += "; event file of location " + std::to_string(loc.id) +
                   " is damaged, kept up to the damage (" + loc.damage + ")";
    }
    // Per cut-off location: the marker's Enter and Leave, and a Leave per open region.
    const std::uint64_t added = 2 * cut_locations + closed;
    events += copied + added;
    std::printf("rank %d: %s: %llu events", rank.rank, rank.end.c_str(),
                static_cast<unsigned long long>(copied));
    if (!rank.finished && cut_locations)
      std::printf(", cut off (marker and %llu open region(s) closed)",
                  static_cast<unsigned long long>(closed));
    std::printf("%s\n", damaged.c_str());
  }
  if (r.unknown_records)
    std::printf("%llu records of kinds libhtrace does not write were left out\n",
                static_cast<unsigned long long>(r.unknown_records));
  std::printf("salvaged archive: '%s' (%llu events)\n", out.c_str(),
              static_cast<unsigned long long>(events));
}

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
    print_summary(htrace::salvage::salvage_archive(options), options.output);
    return htrace::kExitSuccess;
  } catch (const htrace::Error& e) {
    std::fprintf(stderr, "htrace-salvage: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "htrace-salvage: internal error: %s\n", e.what());
    return htrace::kExitInternal;
  }
}
