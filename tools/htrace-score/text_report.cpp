#include "score_report.h"
#include "score_views.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <iterator>
#include <map>
#include <vector>

namespace htrace::score {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out(n > 0 ? std::size_t(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, again);
  va_end(again);
  return out;
}

// 2411066 -> "2,411,066"
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Bytes in binary units, as --limit reads them (k = 1024).
std::string human(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (std::fabs(bytes) >= 1024 && u + 1 < std::size(units)) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? format("%.0f B", bytes) : format("%.2f %s", bytes, units[u]);
}

std::string share(double part, double whole) {
  return whole > 0 ? format("%5.1f %%", 100.0 * part / whole) : std::string("    -  ");
}

// `text` broken into lines of at most 100 columns, each starting with `indent`.
std::string wrapped(const std::string& text, const std::string& indent) {
  std::string out, line = indent;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > 100) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + word;
    start = end + 1;
  }
  return out + line + "\n";
}

std::string seconds_text(double s) {
  return format("%.6g s", s);
}

} // namespace

std::string text_report(const ScoreResult& r, std::size_t top) {
  const ArchiveScore& a = *r.archive;
  const SizeModel& m = r.model;
  const Projection& p = r.projection;
  const std::uint64_t event_bytes = a.event_bytes();
  std::string out;
  out += format("htrace-score: %s (written by %s): %s ranks, %s locations\n", a.archive.c_str(),
                a.creator.empty() ? "an unnamed writer" : a.creator.c_str(),
                grouped(a.ranks.size()).c_str(), grouped(a.locations).c_str());
  out += format("  event files %s bytes (%s), %s records; definitions %s bytes (global %s, "
                "local %s, anchor %s, other %s)\n",
                grouped(event_bytes).c_str(), human(double(event_bytes)).c_str(),
                grouped(a.records()).c_str(), grouped(a.files.definition_bytes()).c_str(),
                grouped(a.files.global_def_bytes).c_str(), grouped(a.files.local_def_bytes).c_str(),
                grouped(a.files.anchor_bytes).c_str(), grouped(a.files.other_bytes).c_str());
  out += "\n" + wrapped("Model: " + model_statement(), "");
  out += wrapped(format("r  = %s per rank and second (%s run bytes over %s rank-seconds; %s)",
                        human(m.rate()).c_str(), grouped(m.run_bytes).c_str(),
                        format("%.6g", m.rank_seconds).c_str(),
                        m.mpi_windows ? "windows from MPI_Init to MPI_Finalize"
                                      : "some ranks without MPI_Init and MPI_Finalize: the span "
                                        "of their events"),
                 "  ");
  out += format("  f  = %s per rank\n", human(m.fixed_per_rank()).c_str());
  out += format("  d0 = %s\n", human(double(m.definitions_fixed)).c_str());
  out += format("  d1 = %s per rank\n", human(m.definitions_rank()).c_str());
  if (m.rank_seconds <= 0)
    out += "  (no window: every rank's events lie at one instant; run bytes scale with N only)\n";
  const std::string t_text =
      seconds_text(p.seconds) +
      (r.work_factor > 0
           ? format(" (--work-factor %g: this run's window times %g)", r.work_factor, r.work_factor)
           : std::string());
  out += "\n" + wrapped(format("Projection for N = %s ranks, T = %s: %s (%s bytes): events %s "
                               "(run %s, fixed %s), definitions %s",
                               grouped(p.ranks).c_str(), t_text.c_str(), human(p.total()).c_str(),
                               grouped(std::uint64_t(std::llround(p.total()))).c_str(),
                               human(p.event_bytes()).c_str(), human(p.run_bytes).c_str(),
                               human(p.fixed_bytes).c_str(), human(p.definition_bytes).c_str()),
                        "");

  out += "\nBy family (shares of the event bytes)\n";
  out += format("  %-24s %11s %11s %13s %7s %11s\n", "family", "calls", "records", "bytes", "share",
                "projected");
  for (const auto& [name, f] : families(a, r.scale))
    out += format("  %-24s %11s %11s %13s %7s %11s\n", name.c_str(), grouped(f.calls).c_str(),
                  grouped(f.records).c_str(), grouped(f.bytes).c_str(),
                  share(double(f.bytes), double(event_bytes)).c_str(), human(f.projected).c_str());

  const std::vector<const RegionRow*> rows = rows_by_bytes(a);
  out += "\n" +
         wrapped(format("By region (%s of %s with records, by bytes). removable: what "
                        "HTRACE_MPI_EXCLUDE of the function removes, its calls that would "
                        "not be recorded and the completions of their requests in other "
                        "calls ('-': never excluded)",
                        grouped(std::min(top, rows.size())).c_str(), grouped(rows.size()).c_str()),
                 "");
  // The name last, as scorep-score has it: OpenMP regions' names are long.
  out += format("  %-8s %11s %11s %13s %7s %13s %11s  %s\n", "family", "calls", "records", "bytes",
                "share", "removable", "projected", "region");
  for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
    const RegionRow& row = *rows[i];
    const std::string removable =
        row.mpi && row.mpi->excludable ? grouped(row.removable_bytes) : std::string("-");
    out +=
        format("  %-8s %11s %11s %13s %7s %13s %11s  %s\n", row.family.c_str(),
               grouped(row.calls).c_str(), grouped(row.records).c_str(), grouped(row.bytes).c_str(),
               share(double(row.bytes), double(event_bytes)).c_str(), removable.c_str(),
               human(scaled(row, row.bytes, r.scale)).c_str(), row.name.c_str());
  }

  const RankSummary ranks = rank_summary(a);
  if (ranks.max) {
    out += format("\nBy rank: min %s bytes (rank %" PRIu64 "), median %s (rank %" PRIu64
                  "), max %s (rank %" PRIu64 ")\n",
                  grouped(ranks.min->bytes).c_str(), ranks.min->id,
                  grouped(ranks.median->bytes).c_str(), ranks.median->id,
                  grouped(ranks.max->bytes).c_str(), ranks.max->id);
    const bool all = a.ranks.size() <= kRanksListed;
    out += all ? "  every rank:\n"
               : format("  the %s ranks with the most bytes:\n",
                        grouped(std::min<std::size_t>(top, 10)).c_str());
    out += format("  %-12s %14s %16s %8s %12s\n", "rank", "records", "bytes", "share", "window");
    std::vector<const RankTally*> listed;
    if (all) {
      for (const RankTally& t : a.ranks)
        listed.push_back(&t);
    } else {
      listed.assign(ranks.by_bytes.begin(),
                    ranks.by_bytes.begin() + std::min<std::size_t>(std::min<std::size_t>(top, 10),
                                                                   ranks.by_bytes.size()));
    }
    for (const RankTally* t : listed)
      out += format("  %-12" PRIu64 " %14s %16s %8s %12s\n", t->id, grouped(t->records).c_str(),
                    grouped(t->bytes).c_str(), share(double(t->bytes), double(event_bytes)).c_str(),
                    seconds_text(window_seconds(a, *t)).c_str());
  }

  const PollTotals polls = poll_totals(a);
  const std::uint64_t poll_calls = polls.calls, poll_records = polls.records;
  if (a.polls_folded && poll_records > 0)
    out += "\n" + wrapped(format("Polls: runs of unsuccessful polls are already folded in this "
                                 "archive (HTRACE::POLLS): %s polling calls are %s records.",
                                 grouped(poll_calls).c_str(), grouped(poll_records).c_str()),
                          "");
  else if (poll_records > 0)
    out += "\n" + wrapped(format("Polls: %s records of polling calls, one per call: htrace "
                                 "records a run of unsuccessful polls as one call "
                                 "(HTRACE_POLL_RUNS=1, its default).",
                                 grouped(poll_records).c_str()),
                          "");
  if (a.mismatched_leaves)
    out += "\n" + wrapped(format("Warning: %s Leave records closed no open region of their name "
                                 "(malformed nesting); they count as calls of their region.",
                                 grouped(a.mismatched_leaves).c_str()),
                          "");

  if (r.plan) {
    const ExclusionPlan& plan = *r.plan;
    out += format("\nLimit %s (%s bytes): projected %s before exclusions, %s after\n",
                  human(double(plan.limit)).c_str(), grouped(plan.limit).c_str(),
                  human(plan.size_before).c_str(), human(plan.size_after).c_str());
    if (plan.steps.empty() && plan.reached) {
      out += "  The projection is within the limit: nothing to exclude.\n";
    } else {
      if (!plan.reached)
        out += "  No exclusion brings the projection under the limit; the best that excluding "
               "can do:\n";
      for (const ExclusionStep& s : plan.steps)
        out += format("  exclude %-28s -%s -> %s\n", s.row->name.c_str(), human(s.removed).c_str(),
                      human(s.size_after).c_str());
      out += "  HTRACE_MPI_EXCLUDE=" + plan.htrace_value() + "\n";
      out += "  As a Score-P filter file:\n";
      std::string filter = plan.scorep_filter();
      for (std::size_t b = 0, e; b < filter.size(); b = e + 1) {
        e = filter.find('\n', b);
        out += "    " + filter.substr(b, e - b) + "\n";
      }
      out += "  What the analysis loses:\n";
      std::map<Effect, std::string> by_effect;
      for (const ExclusionStep& s : plan.steps) {
        std::string& names = by_effect[s.row->mpi->effect];
        names += (names.empty() ? "" : ", ") + s.row->name;
      }
      for (const auto& [effect, names] : by_effect)
        out += wrapped(names + ": " + analysis_loss(effect), "    ");
    }
  }
  return out;
}

} // namespace htrace::score
