// htrace-score: how large a trace will be before the long run. Reads any OTF2 archive (a short
// run, or a previous one), attributes its event bytes to functions, families and ranks, projects
// them to N ranks and T seconds, and with --limit says which MPI functions to leave out
// (HTRACE_MPI_EXCLUDE, or a Score-P filter file) to stay under a size. Thin driver.
#include "archive_score.h"
#include "cli.h"
#include "cli_values.h"
#include "exclusion_plan.h"
#include "format/error.h"
#include "format/otf2_library.h"
#include "output_file.h"
#include "projection.h"
#include "score_report.h"

#include <cstdio>
#include <memory>
#include <string>

namespace {

const char* const kDescription =
    "Estimates the size of a trace before the long run, from any OTF2 archive (a short run of the\n"
    "same program, or a previous one): records and bytes of the event files per function, per\n"
    "family, per rank and in total; their projection to N ranks and T seconds; with --limit, the\n"
    "HTRACE_MPI_EXCLUDE value (and filter file) that keeps the projection under a size,\n"
    "and what the analysis loses by it. Reads the archive once, one location at a time.";

const char* const kExitCodes =
    "Exit codes: 0 success (also when no exclusion reaches --limit: the report says so); 2 usage\n"
    "error; 3 the archive cannot be read; 4 an output cannot be written; 5 internal error.\n"
    "Nothing is left behind on failure.";

} // namespace

int main(int argc, char** argv) {
  // OTF2's diagnostics become the causes in the tool's own messages instead of being printed.
  htrace::format::quiet_otf2_errors();
  CLI::App app(kDescription, "htrace-score");
  htrace::cli::configure(app);
  app.footer(kExitCodes);
  std::string archive, output, filter_file, seconds_text, work_text, limit_text;
  long ranks = 0, top = 25;
  bool json = false;
  app.add_option("ARCHIVE", archive, "OTF2 archive directory or its .otf2 anchor file (read only)");
  app.add_option("--ranks", ranks, "N: project to this many ranks (default: the archive's)")
      ->check(htrace::cli::integer(1, 1000000000))
      ->type_name("N");
  app.add_option("--seconds", seconds_text,
                 "T: project to a run of this length from the end of MPI_Init to the start of "
                 "MPI_Finalize, in seconds or with a unit (s, min, h) (default: the archive's "
                 "mean)")
      ->type_name("T");
  app.add_option("--work-factor", work_text,
                 "K: instead of --seconds, project to a run doing K times this one's work between "
                 "MPI_Init and MPI_Finalize (K times the steps or iterations): T is then K times "
                 "the archive's mean, so that the speed of a run, which varies from run to run "
                 "(the machine's load, the input), does not enter")
      ->type_name("K");
  app.add_option("--limit", limit_text,
                 "a size (k, M, G, T: powers of 1024): the functions to exclude so that the "
                 "projection stays under it, greedily by the bytes their exclusion removes")
      ->type_name("SIZE");
  app.add_flag("--json", json, "write the report as JSON");
  app.add_option("-o,--output", output,
                 "write the report to this file (replaced atomically; "
                 "default: stdout)")
      ->type_name("FILE");
  app.add_option("--filter-file", filter_file,
                 "with --limit: also write the exclusion as a Score-P filter file (libhtrace "
                 "reads it as HTRACE_FILTER_FILE, Score-P as SCOREP_FILTERING_FILE)")
      ->type_name("FILE");
  app.add_option("--top", top, "the most regions and ranks the text report lists (default 25)")
      ->check(htrace::cli::integer(1, 1000000))
      ->type_name("N");
  double seconds = 0, work_factor = 0;
  std::uint64_t limit = 0;
  const htrace::cli::Outcome outcome = htrace::cli::parse(app, argc, argv, [&]() -> std::string {
    if (archive.empty()) return "expected ARCHIVE";
    if (!seconds_text.empty() && !htrace::score::parse_duration(seconds_text, seconds))
      return "--seconds: '" + seconds_text +
             "' is not a positive duration (seconds, or with a unit: s, min, h)";
    if (!work_text.empty() && !seconds_text.empty())
      return "--seconds and --work-factor exclude each other";
    if (!work_text.empty() && !htrace::score::parse_factor(work_text, work_factor))
      return "--work-factor: '" + work_text + "' is not a positive number";
    if (!limit_text.empty() && !htrace::score::parse_byte_count(limit_text, limit))
      return "--limit: '" + limit_text + "' is not a byte count such as 500M, 2G or 1T";
    if (!filter_file.empty() && limit_text.empty()) return "--filter-file needs --limit";
    return "";
  });
  if (!outcome.run()) return htrace::cli::report(outcome);
  try {
    // The outputs are created first: an unwritable place fails before the archive is read.
    std::unique_ptr<htrace::score::OutputFile> report_file, filter;
    if (!output.empty()) report_file = std::make_unique<htrace::score::OutputFile>(output);
    if (!filter_file.empty()) filter = std::make_unique<htrace::score::OutputFile>(filter_file);

    const htrace::score::ArchiveScore score = htrace::score::score_archive(archive);
    htrace::score::ScoreResult result;
    result.archive = &score;
    result.model = htrace::score::size_model(score);
    const std::uint64_t n = ranks > 0 ? std::uint64_t(ranks) : result.model.ranks;
    const double t = seconds > 0       ? seconds
                     : work_factor > 0 ? work_factor * result.model.seconds()
                                       : result.model.seconds();
    result.work_factor = work_factor;
    result.scale = htrace::score::scale_for(result.model, n, t);
    result.projection = htrace::score::project(result.model, n, t);
    if (limit > 0)
      result.plan = htrace::score::plan_exclusions(score.rows, result.scale,
                                                   result.projection.total(), limit);

    const std::string text = json ? htrace::score::json_report(result)
                                  : htrace::score::text_report(result, std::size_t(top));
    if (filter) filter->write(result.plan->scorep_filter());
    if (report_file) report_file->write(text);
    if (filter) filter->publish();
    if (report_file) {
      report_file->publish();
    } else if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
               std::fflush(stdout) != 0) {
      throw htrace::output_error("standard output: write failed");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "htrace-score: error: %s\n", e.what());
    return static_cast<int>(htrace::error_kind(e, htrace::ErrorKind::Input));
  }
  return htrace::kExitSuccess;
}
