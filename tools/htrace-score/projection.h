// The size model: what an archive's run would write with N ranks for T seconds.
//
//   size(N, T) = N * T * r  +  N * f  +  d0 + N * d1
//
//   r   event bytes per rank and second of the run, taken between the end of MPI_Init and the
//       start of MPI_Finalize on each rank (where a rank lacks either, over all its events): the
//       bytes of every region but MPI_Init, MPI_Init_thread and MPI_Finalize, summed over the
//       ranks, divided by the ranks' windows summed (rank-seconds)
//   f   event bytes per rank in MPI_Init, MPI_Init_thread and MPI_Finalize (they do not grow
//       with the run's length)
//   d0  definitions that do not grow with the ranks: the anchor file and the region definitions
//       (estimated from the regions' names)
//   d1  the rest of the definitions (global and local), per rank
//
// A function's own bytes scale alike: those of a fixed region by N / ranks, any other's by
// N * T / rank-seconds. Defaults N and T are the archive's own (T: the mean window), for which the
// projection is the archive's size.
#pragma once

#include "archive_score.h"

#include <cstdint>

namespace htrace::score {

struct SizeModel {
  std::uint64_t ranks = 0;
  double rank_seconds = 0;     ///< the ranks' windows summed
  bool mpi_windows = false;    ///< every rank's window is MPI_Init .. MPI_Finalize
  std::uint64_t run_bytes = 0; ///< event bytes outside the fixed regions
  std::uint64_t fixed_bytes = 0;
  std::uint64_t definitions_fixed = 0;    ///< d0
  std::uint64_t definitions_per_rank = 0; ///< d1 times the archive's ranks (exact sum)

  double seconds() const { return ranks ? rank_seconds / double(ranks) : 0; } ///< T's default
  double rate() const { return rank_seconds > 0 ? double(run_bytes) / rank_seconds : 0; }   ///< r
  double fixed_per_rank() const { return ranks ? double(fixed_bytes) / double(ranks) : 0; } ///< f
  double definitions_rank() const {
    return ranks ? double(definitions_per_rank) / double(ranks) : 0;
  } ///< d1
};

SizeModel size_model(const ArchiveScore& score);

/// The factors by which N ranks for T seconds scale the archive's bytes.
struct Scale {
  double run = 1;  ///< bytes of the run: N * T / rank-seconds
  double rank = 1; ///< bytes per rank: N / ranks
};
/// With no window (every rank's events at one instant) run bytes scale as per-rank bytes.
Scale scale_for(const SizeModel& model, std::uint64_t ranks, double seconds);

struct Projection {
  std::uint64_t ranks = 0;
  double seconds = 0;
  double run_bytes = 0, fixed_bytes = 0, definition_bytes = 0;
  double event_bytes() const { return run_bytes + fixed_bytes; }
  double total() const { return run_bytes + fixed_bytes + definition_bytes; }
};

Projection project(const SizeModel& model, std::uint64_t ranks, double seconds);

/// A row's bytes (or any byte count of it, such as its removable bytes) under `scale`.
inline double scaled(const RegionRow& row, std::uint64_t bytes, const Scale& scale) {
  return double(bytes) * (row.fixed() ? scale.rank : scale.run);
}

} // namespace htrace::score
