// The POP Centre of Excellence's efficiency metrics of an MPI run (analysis/README.md gives the
// definitions and how the ideal-network runtime is estimated): load balance, communication,
// serialization and transfer efficiency, parallel efficiency; for the whole run and for one
// window of it. Fed the enters and leaves of an archive's events and the waits the wait-state
// analysis decides for each MPI call (WaitStateAnalysis::on_call_wait), in any interleaving of
// the locations. Memory: a few numbers per location.
#ifndef HTRACE_ANALYSIS_EFFICIENCY_H
#define HTRACE_ANALYSIS_EFFICIENCY_H

#include "format/global_defs.h"
#include "relations/ref_index.h"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace htrace::analysis {

/// A time interval in ns on the analysis' clock, begin < end.
struct TimeWindow {
  std::int64_t begin_ns = 0, end_ns = 0;
};

/// One location's time within a window, in ns.
struct LocationTimes {
  bool calls_mpi = false;      ///< it entered an MPI region somewhere in the run: a rank
  std::int64_t useful_ns = 0;  ///< between its first and last event, outside MPI calls
  std::int64_t mpi_ns = 0;     ///< inside MPI calls (the outermost, when they nest)
  std::int64_t waiting_ns = 0; ///< of mpi_ns, waiting (each call's longest wait state)
};

/// The metrics of one window; a metric whose denominator is 0 (no rank, no useful time) is NaN.
/// By construction communication == serialization * transfer and
/// parallel == load_balance * communication.
struct Efficiency {
  TimeWindow window;
  std::int64_t runtime_ns = 0;       ///< the window's length
  std::int64_t ideal_runtime_ns = 0; ///< max over ranks of useful + waiting
  std::int64_t max_useful_ns = 0;
  double avg_useful_ns = 0;
  std::uint32_t ranks = 0; ///< the locations that call MPI, over which the metrics run
  double load_balance = 0, communication = 0, serialization = 0, transfer = 0, parallel = 0;
  std::vector<LocationTimes> locations; ///< all locations, by index
};

/// The metrics of a window from its locations' times (useful, MPI and waiting time filled in).
Efficiency efficiency_of(TimeWindow window, std::vector<LocationTimes> locations);

class EfficiencyAnalysis {
public:
  /// `window`: a phase to measure besides the whole run (from the first event to the last).
  EfficiencyAnalysis(std::size_t locations,
                     const std::map<std::uint32_t, format::RegionDef>& regions,
                     std::optional<TimeWindow> window);
  void enter(std::uint32_t loc, std::int64_t t, std::uint32_t region);
  void leave(std::uint32_t loc, std::int64_t t);
  /// A call entered at `enter` on `loc` waited `wait_ns` (WaitStateAnalysis::on_call_wait).
  void call_wait(std::uint32_t loc, std::int64_t enter, std::int64_t wait_ns);
  /// A hint: `loc`'s event comes next. Fetches its record (one cache line); changes nothing.
  void prefetch(std::uint32_t loc) const { __builtin_prefetch(&locs_[loc]); }

  struct Results {
    Efficiency run;
    std::optional<Efficiency> window;
  };
  /// After the last event; an MPI call still open ends at its location's last event.
  Results finish();

private:
  /// What a location's enters and leaves use, in one cache line.
  struct alignas(64) Loc {
    std::int64_t first = 0, last = 0;
    std::int64_t call_enter = 0;
    std::int64_t mpi = 0;       ///< the whole run
    std::int64_t mpi_win = 0;   ///< clipped to the window
    std::uint64_t mpi_open = 0; ///< bit i: the i-th open region (from the outermost) is MPI
    std::uint32_t open = 0;     ///< regions open
    std::uint32_t depth = 0;    ///< MPI regions open
    bool seen = false, calls_mpi = false;
  };
  static_assert(sizeof(Loc) == 64, "a location's record is one cache line");
  static constexpr std::uint32_t kOpenBits = 64;
  /// The rest of a location's figures: its waits, and whether each region open more than
  /// kOpenBits deep is MPI.
  struct Waits {
    std::int64_t waiting = 0, waiting_win = 0; ///< the whole run, clipped to the window
    std::vector<bool> deeper;
  };
  void touch(Loc& l, std::int64_t t);
  void add_call(Loc& l, std::int64_t from, std::int64_t to);
  std::int64_t clipped(std::int64_t from, std::int64_t to) const;

  relations::RefSet mpi_regions_;
  std::optional<TimeWindow> window_;
  std::vector<Loc> locs_;
  std::vector<Waits> waits_; ///< by location
};

} // namespace htrace::analysis
#endif
