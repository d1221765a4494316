#include "projection.h"

#include <algorithm>

namespace htrace::score {

SizeModel size_model(const ArchiveScore& score) {
  SizeModel m;
  m.ranks = score.ranks.size();
  m.mpi_windows = !score.ranks.empty();
  for (const RankTally& r : score.ranks) {
    m.rank_seconds += double(r.window_ticks()) / double(score.resolution);
    m.mpi_windows = m.mpi_windows && r.mpi_window();
  }
  for (const RegionRow& row : score.rows)
    (row.fixed() ? m.fixed_bytes : m.run_bytes) += row.bytes;
  const ArchiveFiles& f = score.files;
  const std::uint64_t regions = std::min(score.region_definition_bytes, f.global_def_bytes);
  m.definitions_fixed = f.anchor_bytes + f.other_bytes + regions;
  m.definitions_per_rank = f.global_def_bytes - regions + f.local_def_bytes;
  return m;
}

Scale scale_for(const SizeModel& model, std::uint64_t ranks, double seconds) {
  Scale s;
  s.rank = model.ranks ? double(ranks) / double(model.ranks) : 0;
  s.run = model.rank_seconds > 0 ? double(ranks) * seconds / model.rank_seconds : s.rank;
  return s;
}

Projection project(const SizeModel& model, std::uint64_t ranks, double seconds) {
  const Scale s = scale_for(model, ranks, seconds);
  Projection p;
  p.ranks = ranks;
  p.seconds = seconds;
  p.run_bytes = double(model.run_bytes) * s.run;
  p.fixed_bytes = double(model.fixed_bytes) * s.rank;
  p.definition_bytes =
      double(model.definitions_fixed) + double(model.definitions_per_rank) * s.rank;
  return p;
}

} // namespace htrace::score
