// What htrace-score counts while an archive streams past: per row (a region, or the events outside
// any region) and per rank. Small: grows with regions and ranks, never with events or with the
// locations of a rank.
#pragma once

#include "mpi_function_table.h"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::score {

/// One row of the score: a region (by its name), or a pseudo-row such as the events outside any
/// region.
struct RegionRow {
  std::string name;
  std::string family;               ///< an HTRACE_MPI_EXCLUDE family, or the region's paradigm
  const MpiFunction* mpi = nullptr; ///< libhtrace's entry for the name, if it is an MPI function
  /// MPI_Init and MPI_Init_thread, MPI_Finalize: their records are per rank, not per second.
  enum class Lifecycle : std::uint8_t { None, Init, Finalize } lifecycle = Lifecycle::None;
  std::uint64_t calls = 0;   ///< Leaves; a run of polls counts its HTRACE::POLLS
  std::uint64_t records = 0; ///< events attributed to the row
  std::uint64_t bytes = 0;   ///< their bytes in the event files
  // What excluding the function removes: its calls that the wrappers would then not record, and
  // the records of requests they posted that later calls hold (the follow-on part).
  std::uint64_t removable_calls = 0;
  std::uint64_t removable_records = 0;
  std::uint64_t removable_bytes = 0;
  std::uint64_t follow_on_records = 0;
  std::uint64_t follow_on_bytes = 0;
  bool fixed() const { return lifecycle != Lifecycle::None; }
};

/// One rank (an OTF2 location group of a process, with the groups it created) and the span its
/// rate is taken over.
struct RankTally {
  std::uint64_t id = 0; ///< the location group's id (the MPI rank in htrace's archives)
  std::uint64_t records = 0, bytes = 0;
  std::uint64_t fixed_bytes = 0; ///< in fixed rows (RegionRow::fixed)
  // Times in ticks; UINT64_MAX where not seen.
  std::uint64_t first = UINT64_MAX, last = 0;
  std::uint64_t init_end = UINT64_MAX, finalize_begin = UINT64_MAX;
  /// The end of MPI_Init to the start of MPI_Finalize where both were seen in that order, else
  /// the first to the last event.
  bool mpi_window() const {
    return init_end != UINT64_MAX && finalize_begin != UINT64_MAX && finalize_begin > init_end;
  }
  std::uint64_t window_ticks() const {
    if (mpi_window()) return finalize_begin - init_end;
    return last > first && first != UINT64_MAX ? last - first : 0;
  }
};

} // namespace htrace::score
