#include "score_report.h"
#include "score_views.h"

#include <cmath>
#include <cstdio>

namespace htrace::score {
namespace {

std::string printed(const char* fmt, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, fmt, v);
  return buffer;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 9e15) return printed("%.0f", v);
  return printed("%.17g", v);
}

std::string number(std::uint64_t v) {
  return std::to_string(v);
}

} // namespace

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
  for (const auto& [name, f] : families(a, r.scale)) {
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
           ", \"window_seconds\": " + number(window_seconds(a, t)) +
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
