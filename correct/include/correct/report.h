// What a correction run found and changed; printed as text or JSON by the driver.
#ifndef HTRACE_CORRECT_REPORT_H
#define HTRACE_CORRECT_REPORT_H

#include "correct/model.h"

#include <array>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace htrace::correct {

// How well a location's clock is known and how far the CLC moved its events beyond that.
struct LocationClock {
  int64_t location = 0;
  int64_t clock_error = -1; // bound from the clock measurements (ns); -1: the archive has none
  int64_t expected_clock_error = -1; // from the measurements' midpoints (ns); -1: unknown
  int measurements = 0;              // clock measurements the correction interpolated between
  int64_t max_move = 0; // largest move by the CLC (final minus pre-synchronized input time)
  int64_t moved = 0, moved_beyond_error = 0; // events moved at all, and by more than clock_error
};

struct Report {
  std::string input, output;
  bool written = false;
  int processes = 0, locations = 0, correction_ranks = 1;
  uint64_t events = 0;
  int64_t lmin_intra = 0, lmin_inter = 0, lmin_omp = 0; // used
  std::string lmin_source; // "archive", "default", "command line" (+ ", lowered to ...")
  // Before the trace's own bounds (intra, inter, OpenMP), and those bounds (kNoTime: none).
  std::array<int64_t, 3> lmin_base{}, lmin_observed{};
  std::array<std::string, 3> lmin_observed_by; // the relations that showed lmin_observed
  uint64_t presynced_locations = 0;            // locations whose clock offsets were interpolated
  std::array<uint64_t, kMessageKinds> messages{}, violations_before{}, violations_after{};
  uint64_t events_shifted = 0, jumps = 0;
  uint64_t rounds = 0, reevaluated = 0; // parallel forward replay: exchange rounds, re-evaluations
  int64_t max_displacement = 0;
  double mean_displacement = 0; // over all events, ns
  // Local-interval deviation classes weighted by original interval length (ns):
  // unchanged, <1 %, 1-10 %, 10-100 %, >100 %.
  std::array<double, 5> deviation_time{};
  std::map<std::string, uint64_t> event_records, definition_records;
  uint64_t unknown_events = 0, unknown_definitions = 0;
  // Locations whose event file was copied record by record (event_file.h); the others were
  // written through the OTF2 library.
  uint64_t copied_event_files = 0;
  std::vector<LocationClock> clocks;                                           // by location id
  double seconds = 0, read_seconds = 0, replay_seconds = 0, write_seconds = 0; // rank 0's phases
};

void print_text(const Report& report, std::ostream& out);
void print_json(const Report& report, std::ostream& out);

} // namespace htrace::correct
#endif
