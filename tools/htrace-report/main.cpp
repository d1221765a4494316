// htrace-report: turns an OTF2 archive into one self-contained HTML report, a Chrome/Perfetto
// JSON trace, a copy ViTE reads, or its wait states and efficiency metrics as JSON or CSV. Thin
// driver over report_run.h.
#include "cli.h"
#include "format/error.h"
#include "format/otf2_library.h"
#include "huge_page_heap.h"
#include "report_run.h"
#include "time_window.h"

#include <cstdio>
#include <map>
#include <string>
#include <unistd.h>

namespace {

const char* const kDescription =
    "Writes a self-contained HTML report of an OTF2 archive (summary, profile, communication\n"
    "matrix, timeline, clock quality, wait states); with --format perfetto a JSON trace for the\n"
    "Perfetto UI; with --format vite a copy of the archive that ViTE 1.2 shows without\n"
    "warnings; with --format json or csv the wait states of Scalasca's MPI and OpenMP\n"
    "patterns and the POP efficiency metrics.\n"
    "Reads the archive once, streaming; memory does not grow with the number of events.";

const char* const kExitCodes =
    "Exit codes: 0 success; 2 usage error; 3 an archive or the correction report cannot be\n"
    "read, or --before is not the archive ARCHIVE was corrected from; 4 OUT cannot be written;\n"
    "5 internal error. Nothing is left behind on failure.";

} // namespace

int main(int argc, char** argv) {
  htrace::tools::use_huge_page_heap(argv);
  // OTF2's diagnostics become the causes in the tool's own messages instead of being printed.
  htrace::format::quiet_otf2_errors();
  CLI::App app(kDescription, "htrace-report");
  htrace::cli::configure(app);
  app.footer(kExitCodes);
  htrace::report::RunOptions o;
  std::string window;
  bool no_progress = false;
  app.add_option("ARCHIVE", o.archive,
                 "OTF2 archive directory or its .otf2 anchor file (read only)");
  app.add_option("-o,--output", o.output, "the file to write (replaced atomically)");
  std::string format = "html";
  const std::map<std::string, htrace::report::Format> formats = {
      {"html", htrace::report::Format::Html},
      {"perfetto", htrace::report::Format::Perfetto},
      {"vite", htrace::report::Format::Vite},
      {"json", htrace::report::Format::Json},
      {"csv", htrace::report::Format::Csv}};
  app.add_option("--format", format,
                 "html (default), perfetto (JSON Trace Event Format), vite (a copy of the "
                 "archive in the layout ViTE 1.2 reads; OUT is a new directory), json (the wait "
                 "states of Scalasca's MPI and OpenMP patterns in ns and the POP efficiency "
                 "metrics) or csv (the same figures, one a row)")
      ->check(CLI::Validator(
          [&formats](std::string& v) {
            return formats.count(v) ? std::string()
                                    : "'" + v + "' is not html, perfetto, vite, json or csv";
          },
          "", "format"))
      ->type_name("FORMAT");
  app.add_option("--window", window,
                 "a phase of the run, from the trace start, in seconds or with a unit (0.5:0.6, "
                 "500ms:600ms; s, ms, us, ns): html, json and csv compute the efficiency metrics "
                 "for it besides the whole run and the HTML detail timeline shows it (default: "
                 "from the end of MPI_Init to MPI_Finalize, else the whole run); perfetto exports "
                 "only the slices that overlap it, whole, and the flows and counter values in it")
      ->type_name("T0:T1");
  app.add_option("--max-events", o.max_events,
                 "perfetto: the most trace events (JSON records) written, 0 for no cap (default " +
                     std::to_string(o.max_events) +
                     ", about 200 MB, which the Perfetto UI opens in a browser tab). The export "
                     "stops at the time the cap is reached: slices open then are kept whole, "
                     "nothing later is written, and stderr and otherData say what was left out")
      ->check(htrace::cli::integer(0, 1000000000000))
      ->type_name("N");
  app.add_option("--correction", o.correction_report,
                 "the JSON report of htrace-correct --json for this archive, shown beside the "
                 "clocks")
      ->type_name("FILE");
  app.add_option("--before", o.before,
                 "the archive ARCHIVE was corrected from (htrace-correct's input): its wait "
                 "states and efficiency beside ARCHIVE's with what the correction changed; in "
                 "HTML also its clock-condition violations and its most violated message drawn "
                 "as it was and as ARCHIVE has it")
      ->type_name("RAW");
  app.add_option("--detail-slices", o.detail_slices,
                 "the most regions the HTML detail timeline draws, the longest (default 20000)")
      ->check(htrace::cli::integer(1, 10000000))
      ->type_name("N");
  app.add_flag("--no-progress", no_progress, "no progress display on a terminal");
  const htrace::cli::Outcome outcome = htrace::cli::parse(app, argc, argv, [&]() -> std::string {
    o.format = formats.at(format);
    if (o.archive.empty()) return "expected ARCHIVE";
    if (o.output.empty()) return "expected -o OUT";
    if (!window.empty() &&
        !htrace::report::parse_window(window, o.window_begin_ns, o.window_end_ns))
      return "--window: '" + window +
             "' is not T0:T1 with 0 <= T0 < T1 (seconds, or with a unit: s, ms, us, ns)";
    const bool analysis = o.format == htrace::report::Format::Html ||
                          o.format == htrace::report::Format::Json ||
                          o.format == htrace::report::Format::Csv;
    if (!window.empty() && !analysis && o.format != htrace::report::Format::Perfetto)
      return "--window applies to html, json, csv and perfetto only";
    if (app.count("--max-events") && o.format != htrace::report::Format::Perfetto)
      return "--max-events applies to perfetto only";
    if (!o.before.empty() && !analysis) return "--before applies to html, json and csv only";
    return "";
  });
  if (!outcome.run()) return htrace::cli::report(outcome);
  o.progress = !no_progress && isatty(STDERR_FILENO);
  try {
    const auto r = htrace::report::run(o);
    if (o.format == htrace::report::Format::Vite) {
      // What the copy changed, on stdout: the result of the run, like the copy itself; what it
      // leaves out, on stderr.
      std::printf("htrace-report: %s: ViTE copy: %u communicator groups written as location "
                  "lists\n",
                  o.output.c_str(), r.vite.rewritten_groups);
      const std::string left_out = htrace::report::left_out_summary(r.vite);
      if (!left_out.empty())
        std::fprintf(stderr, "htrace-report: %s: %s\n", o.output.c_str(), left_out.c_str());
      std::printf("htrace-report: open it with: vite %s/traces.otf2\n", o.output.c_str());
    } else if (o.format == htrace::report::Format::Perfetto) {
      const htrace::report::PerfettoCounts& c = r.perfetto;
      std::fprintf(stderr,
                   "htrace-report: %s: %llu events, %llu slices, %llu flows, %llu counter "
                   "values; %llu records not drawn (request records, unmatched message ends and "
                   "kinds the Trace Event Format has no picture for)\n",
                   o.output.c_str(), static_cast<unsigned long long>(r.events),
                   static_cast<unsigned long long>(c.slices),
                   static_cast<unsigned long long>(c.flows),
                   static_cast<unsigned long long>(c.counter_values),
                   static_cast<unsigned long long>(r.events - c.records_drawn));
      if (c.values_not_finite || c.values_undefined)
        std::fprintf(stderr,
                     "htrace-report: %s: %llu metric values left out (%llu NaN or infinite, "
                     "%llu of metrics the definitions lack)\n",
                     o.output.c_str(),
                     static_cast<unsigned long long>(c.values_not_finite + c.values_undefined),
                     static_cast<unsigned long long>(c.values_not_finite),
                     static_cast<unsigned long long>(c.values_undefined));
      if (!c.left_out.empty())
        std::fprintf(stderr, "htrace-report: %s: %s\n", o.output.c_str(), c.left_out.c_str());
    } else {
      std::fprintf(stderr, "htrace-report: %s: %llu events\n", o.output.c_str(),
                   static_cast<unsigned long long>(r.events));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "htrace-report: error: %s\n", e.what());
    return static_cast<int>(htrace::error_kind(e, htrace::ErrorKind::Input));
  }
  return htrace::kExitSuccess;
}
