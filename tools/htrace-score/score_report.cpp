#include "score_report.h"

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
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
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

struct FamilyTotal {
  std::uint64_t calls = 0, records = 0, bytes = 0, removable = 0;
  double projected = 0;
};

// Families by bytes: MPI families, paradigms, and the pseudo-rows under their own names.
std::vector<std::pair<std::string, FamilyTotal>> families(const ScoreResult& r) {
  std::map<std::string, FamilyTotal> by;
  for (const RegionRow& row : r.archive->rows) {
    if (row.bytes == 0 && row.records == 0) continue;
    FamilyTotal& f = by[row.family.empty() ? row.name : row.family];
    f.calls += row.calls;
    f.records += row.records;
    f.bytes += row.bytes;
    f.removable += row.removable_bytes;
    f.projected += scaled(row, row.bytes, r.scale);
  }
  std::vector<std::pair<std::string, FamilyTotal>> out(by.begin(), by.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  return out;
}

// Rows with any bytes, by bytes (ties by name).
std::vector<const RegionRow*> rows_by_bytes(const ArchiveScore& a) {
  std::vector<const RegionRow*> rows;
  for (const RegionRow& row : a.rows)
    if (row.bytes > 0 || row.records > 0) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](const RegionRow* x, const RegionRow* y) {
    return x->bytes != y->bytes ? x->bytes > y->bytes : x->name < y->name;
  });
  return rows;
}

struct RankSummary {
  std::vector<const RankTally*> by_bytes; // descending
  const RankTally* min = nullptr;
  const RankTally* median = nullptr;
  const RankTally* max = nullptr;
};

RankSummary rank_summary(const ArchiveScore& a) {
  RankSummary s;
  for (const RankTally& r : a.ranks)
    s.by_bytes.push_back(&r);
  std::stable_sort(s.by_bytes.begin(), s.by_bytes.end(),
                   [](const RankTally* x, const RankTally* y) { return x->bytes > y->bytes; });
  if (!s.by_bytes.empty()) {
    s.max = s.by_bytes.front();
    s.min = s.by_bytes.back();
    s.median = s.by_bytes[s.by_bytes.size() / 2];
  }
  return s;
}

double rank_seconds(const ArchiveScore& a, const RankTally& r) {
  return double(r.window_ticks()) / double(a.resolution);
}

std::uint64_t polls_folded_calls(const ArchiveScore& a, std::uint64_t* records) {
  std::uint64_t calls = 0;
  *records = 0;
  for (const RegionRow& row : a.rows)
    if (row.mpi && row.mpi->poll) {
      calls += row.calls;
      *records += row.records;
    }
  return calls;
}

// ---- JSON ----

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += format("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 9e15) return format("%.0f", v);
  return format("%.17g", v);
}

std::string number(std::uint64_t v) {
  return std::to_string(v);
}

} // namespace

std::string model_statement() {
  return "size(N, T) = N * T * r + N * f + d0 + N * d1, for N ranks running T seconds between "
         "the end of MPI_Init and the start of MPI_Finalize. r: event bytes per rank and second "
         "of that window in this archive (every region but MPI_Init, MPI_Init_thread and "
         "MPI_Finalize, summed over the ranks, divided by the ranks' windows summed; a rank "
         "without both calls: the span of its events); f: event bytes per rank in MPI_Init, "
         "MPI_Init_thread and MPI_Finalize; d0: definitions that do not grow with the ranks (the "
         "anchor file and the region definitions, estimated from their names); d1: the rest of "
         "the definitions per rank. Each function's bytes scale alike. Defaults: this archive's "
         "ranks and mean window, for which the projection is the archive's size.";
}

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
  for (const auto& [name, f] : families(r))
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
                    seconds_text(rank_seconds(a, *t)).c_str());
  }

  std::uint64_t poll_records = 0;
  const std::uint64_t poll_calls = polls_folded_calls(a, &poll_records);
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

std::string json_report(const ScoreResult& r) {
  const ArchiveScore& a = *r.archive;
  const SizeModel& m = r.model;
  const Projection& p = r.projection;
  const std::uint64_t event_bytes = a.event_bytes();
  std::string j = "{\n";
  j += "  \"archive\": " + quoted(a.archive) + ",\n";
  j += "  \"creator\": " + quoted(a.creator) + ",\n";
  j += "  \"ranks\": " + number(std::uint64_t(a.ranks.size())) + ",\n";
  j += "  \"locations\": " + number(a.locations) + ",\n";
  j += "  \"records\": " + number(a.records()) + ",\n";
  j += "  \"polls_folded\": " + std::string(a.polls_folded ? "true" : "false") + ",\n";
  j += "  \"mismatched_leaves\": " + number(a.mismatched_leaves) + ",\n";
  j += "  \"files\": {\"event_bytes\": " + number(a.files.event_bytes) +
       ", \"event_files\": " + number(a.files.event_files) +
       ", \"local_definition_bytes\": " + number(a.files.local_def_bytes) +
       ", \"global_definition_bytes\": " + number(a.files.global_def_bytes) +
       ", \"anchor_bytes\": " + number(a.files.anchor_bytes) +
       ", \"other_bytes\": " + number(a.files.other_bytes) +
       ", \"total_bytes\": " + number(a.files.total()) + "},\n";
  j += "  \"model\": {\"statement\": " + quoted(model_statement()) +
       ", \"rate_bytes_per_rank_second\": " + number(m.rate()) +
       ", \"run_bytes\": " + number(m.run_bytes) + ", \"rank_seconds\": " + number(m.rank_seconds) +
       ", \"mpi_windows\": " + (m.mpi_windows ? "true" : "false") +
       ", \"fixed_bytes\": " + number(m.fixed_bytes) +
       ", \"fixed_bytes_per_rank\": " + number(m.fixed_per_rank()) +
       ", \"definitions_fixed_bytes\": " + number(m.definitions_fixed) +
       ", \"definitions_rank_bytes\": " + number(m.definitions_per_rank) +
       ", \"definitions_bytes_per_rank\": " + number(m.definitions_rank()) +
       ", \"seconds\": " + number(m.seconds()) + "},\n";
  j += "  \"projection\": {\"ranks\": " + number(p.ranks) + ", \"seconds\": " + number(p.seconds) +
       ", \"work_factor\": " + (r.work_factor > 0 ? number(r.work_factor) : "null") +
       ", \"run_scale\": " + number(r.scale.run) + ", \"rank_scale\": " + number(r.scale.rank) +
       ", \"run_bytes\": " + number(p.run_bytes) + ", \"fixed_bytes\": " + number(p.fixed_bytes) +
       ", \"event_bytes\": " + number(p.event_bytes()) +
       ", \"definition_bytes\": " + number(p.definition_bytes) +
       ", \"total_bytes\": " + number(p.total()) + "},\n";
  j += "  \"families\": [";
  bool first = true;
  for (const auto& [name, f] : families(r)) {
    j += std::string(first ? "\n" : ",\n") + "    {\"family\": " + quoted(name) +
         ", \"calls\": " + number(f.calls) + ", \"records\": " + number(f.records) +
         ", \"bytes\": " + number(f.bytes) +
         ", \"share\": " + number(event_bytes ? double(f.bytes) / double(event_bytes) : 0.0) +
         ", \"removable_bytes\": " + number(f.removable) +
         ", \"projected_bytes\": " + number(f.projected) + "}";
    first = false;
  }
  j += "\n  ],\n  \"regions\": [";
  first = true;
  for (const RegionRow* row : rows_by_bytes(a)) {
    j += std::string(first ? "\n" : ",\n") + "    {\"name\": " + quoted(row->name) +
         ", \"family\": " + quoted(row->family) + ", \"mpi\": " + (row->mpi ? "true" : "false") +
         ", \"excludable\": " + (row->mpi && row->mpi->excludable ? "true" : "false") +
         ", \"fixed\": " + (row->fixed() ? "true" : "false") +
         ", \"calls\": " + number(row->calls) + ", \"records\": " + number(row->records) +
         ", \"bytes\": " + number(row->bytes) +
         ", \"share\": " + number(event_bytes ? double(row->bytes) / double(event_bytes) : 0.0) +
         ", \"removable_calls\": " + number(row->removable_calls) +
         ", \"removable_records\": " + number(row->removable_records) +
         ", \"removable_bytes\": " + number(row->removable_bytes) +
         ", \"follow_on_records\": " + number(row->follow_on_records) +
         ", \"follow_on_bytes\": " + number(row->follow_on_bytes) +
         ", \"projected_bytes\": " + number(scaled(*row, row->bytes, r.scale)) +
         ", \"projected_removable_bytes\": " + number(scaled(*row, row->removable_bytes, r.scale)) +
         "}";
    first = false;
  }
  j += "\n  ],\n";
  const RankSummary ranks = rank_summary(a);
  const auto rank_json = [&](const RankTally& t) {
    return "{\"rank\": " + number(t.id) + ", \"records\": " + number(t.records) +
           ", \"bytes\": " + number(t.bytes) + ", \"fixed_bytes\": " + number(t.fixed_bytes) +
           ", \"window_seconds\": " + number(rank_seconds(a, t)) +
           ", \"mpi_window\": " + (t.mpi_window() ? "true" : "false") + "}";
  };
  j += "  \"by_rank\": {";
  if (ranks.max)
    j += "\"min\": " + rank_json(*ranks.min) + ", \"median\": " + rank_json(*ranks.median) +
         ", \"max\": " + rank_json(*ranks.max) + ", ";
  j += "\"top\": [";
  for (std::size_t i = 0; i < ranks.by_bytes.size() && i < 10; ++i)
    j += (i ? ", " : "") + rank_json(*ranks.by_bytes[i]);
  j += "], \"all\": ";
  if (a.ranks.size() <= kRanksListed) {
    j += "[";
    for (std::size_t i = 0; i < a.ranks.size(); ++i)
      j += (i ? ", " : "") + rank_json(a.ranks[i]);
    j += "]";
  } else {
    j += "null";
  }
  j += "}";
  if (r.plan) {
    const ExclusionPlan& plan = *r.plan;
    j += ",\n  \"limit\": {\"bytes\": " + number(plan.limit) +
         ", \"reached\": " + (plan.reached ? "true" : "false") +
         ", \"projected_before\": " + number(plan.size_before) +
         ", \"projected_after\": " + number(plan.size_after) +
         ", \"htrace_mpi_exclude\": " + quoted(plan.htrace_value()) +
         ", \"scorep_filter\": " + quoted(plan.scorep_filter()) + ", \"exclude\": [";
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      const ExclusionStep& s = plan.steps[i];
      j += std::string(i ? ",\n" : "\n") + "    {\"name\": " + quoted(s.row->name) +
           ", \"family\": " + quoted(s.row->family) + ", \"removed_bytes\": " + number(s.removed) +
           ", \"projected_after\": " + number(s.size_after) +
           ", \"loses\": " + quoted(analysis_loss(s.row->mpi->effect)) + "}";
    }
    j += plan.steps.empty() ? "]}" : "\n  ]}";
  }
  j += "\n}\n";
  return j;
}

} // namespace htrace::score
