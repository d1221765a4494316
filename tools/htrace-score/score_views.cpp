#include "score_views.h"

#include <algorithm>
#include <map>

namespace htrace::score {

std::vector<std::pair<std::string, FamilyTotal>> families(const ArchiveScore& a,
                                                          const Scale& scale) {
  std::map<std::string, FamilyTotal> by;
  for (const RegionRow& row : a.rows) {
    if (row.bytes == 0 && row.records == 0) continue;
    FamilyTotal& f = by[row.family.empty() ? row.name : row.family];
    f.calls += row.calls;
    f.records += row.records;
    f.bytes += row.bytes;
    f.removable += row.removable_bytes;
    f.projected += scaled(row, row.bytes, scale);
  }
  std::vector<std::pair<std::string, FamilyTotal>> out(by.begin(), by.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.second.bytes > y.second.bytes; });
  return out;
}

std::vector<const RegionRow*> rows_by_bytes(const ArchiveScore& a) {
  std::vector<const RegionRow*> rows;
  for (const RegionRow& row : a.rows)
    if (row.bytes > 0 || row.records > 0) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](const RegionRow* x, const RegionRow* y) {
    return x->bytes != y->bytes ? x->bytes > y->bytes : x->name < y->name;
  });
  return rows;
}

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

double window_seconds(const ArchiveScore& a, const RankTally& r) {
  return double(r.window_ticks()) / double(a.resolution);
}

PollTotals poll_totals(const ArchiveScore& a) {
  PollTotals t;
  for (const RegionRow& row : a.rows)
    if (row.mpi && row.mpi->poll) {
      t.calls += row.calls;
      t.records += row.records;
    }
  return t;
}

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

} // namespace htrace::score
