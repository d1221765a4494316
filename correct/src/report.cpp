#include "correct/report.h"

#include <algorithm>
#include <array>
#include <climits>
#include <iomanip>
#include <vector>

namespace htrace::correct {
namespace {

const char* const kDeviationNames[5] = {"unchanged", "<1%", "1-10%", "10-100%", ">100%"};
// Locations the text report names, of those the CLC moved beyond their clock error.
constexpr size_t kLocationsNamed = 8;

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      o += ' ';
    else
      o += c;
  }
  return o;
}

std::string json_ns(int64_t v) {
  return v == kNoTime ? std::string("null") : std::to_string(v);
}

std::string observed(const Report& r, int cls) {
  const int64_t v = r.lmin_observed[cls];
  return v == kNoTime ? std::string("-")
                      : std::to_string(v) + " ns (" + r.lmin_observed_by[cls] + ")";
}

// The clock measurements' error bound against what the CLC moved, in one line, and the locations
// moved furthest beyond their bound.
void print_clocks(const Report& r, std::ostream& out) {
  int64_t worst_error = -1, worst_expected = -1;
  uint64_t measured = 0, beyond = 0;
  int fewest = INT_MAX, most = 0;
  for (const LocationClock& c : r.clocks) {
    if (c.moved_beyond_error > 0) beyond++;
    if (c.clock_error < 0) continue;
    measured++;
    worst_error = std::max(worst_error, c.clock_error);
    worst_expected = std::max(worst_expected, c.expected_clock_error);
    fewest = std::min(fewest, c.measurements), most = std::max(most, c.measurements);
  }
  out << "  clock measurements: " << measured << " of " << r.clocks.size() << " locations measured";
  if (measured) out << ", estimated clock error at most " << worst_error << " ns";
  out << "; the CLC moved events beyond it on " << beyond << " location(s)\n";
  if (measured)
    out << "    error bound: half the round trip of each measurement's best exchange (it holds "
           "however the round trip splits into one-way latencies), the largest over a location's "
           "measurements\n";
  if (worst_expected >= 0)
    out << "    expected clock error (not a bound): " << worst_expected
        << " ns, the largest over the locations of the median distance of a measurement's "
           "midpoint from the line through its neighbours\n";
  // A clock whose rate changes is followed only as often as it was measured.
  if (measured && most <= 2)
    out << "    no measurement during the run (MPI_Init and MPI_Finalize only): offsets "
           "interpolated linearly\n";
  else if (measured)
    out << "    " << fewest << (fewest == most ? "" : "-" + std::to_string(most))
        << " measurements per location (MPI_Init, during the run, MPI_Finalize): offsets "
           "interpolated piecewise\n";
  // The locations moved furthest beyond their clock error, a screenful at any scale.
  std::vector<const LocationClock*> moved;
  for (const LocationClock& c : r.clocks)
    if (c.moved_beyond_error > 0) moved.push_back(&c);
  const size_t named = std::min(moved.size(), kLocationsNamed);
  std::partial_sort(moved.begin(), moved.begin() + static_cast<std::ptrdiff_t>(named), moved.end(),
                    [](const LocationClock* a, const LocationClock* b) {
                      if (a->max_move != b->max_move) return a->max_move > b->max_move;
                      return a->location < b->location;
                    });
  for (size_t i = 0; i < named; ++i) {
    const LocationClock& c = *moved[i];
    out << "    location " << c.location << ": " << c.moved_beyond_error
        << " events moved by more than the clock error ("
        << (c.clock_error < 0 ? std::string("unknown") : std::to_string(c.clock_error) + " ns")
        << "), up to " << c.max_move << " ns\n";
  }
  if (moved.size() > named)
    out << "    and " << moved.size() - named
        << " more location(s) moved beyond the clock error (--json lists every location)\n";
}

} // namespace

void print_text(const Report& r, std::ostream& out) {
  out << "htrace-correct: " << r.input
      << (r.written ? " -> " + r.output : std::string(" (check only)")) << "\n";
  out << "  " << r.events << " events, " << r.locations << " locations, " << r.processes
      << " processes, " << r.correction_ranks << " correction process(es), " << std::fixed
      << std::setprecision(2) << r.seconds << " s\n";
  if (r.correction_ranks > 1)
    out << "  parallel replay: " << r.rounds << " exchange round(s), " << r.reevaluated
        << " events evaluated again\n";
  out << "  minimum latency (" << r.lmin_source << "): MPI intra-node " << r.lmin_intra
      << " ns, inter-node " << r.lmin_inter << " ns, OpenMP " << r.lmin_omp << " ns\n";
  static const char* const kClassNames[3] = {"intra-node", "inter-node", "OpenMP"};
  out << "    the trace shows at most: ";
  for (int k = 0; k < 3; ++k)
    out << (k ? ", " : "") << kClassNames[k] << " " << observed(r, k);
  out << "\n";
  // Only a command-line value can stay above what the trace shows (the others are lowered).
  const std::array<int64_t, 3> used{r.lmin_intra, r.lmin_inter, r.lmin_omp};
  for (int k = 0; k < 3; ++k)
    if (r.lmin_observed[k] != kNoTime && used[k] > r.lmin_observed[k])
      out << "  warning: the " << kClassNames[k] << " minimum latency " << used[k]
          << " ns is above what the trace shows: every round trip faster than twice it is "
             "stretched, and the stretch adds up over a run\n";
  print_clocks(r, out);
  out << "  logical messages / violations before / after:\n";
  for (int k = 0; k < kMessageKinds; ++k)
    out << "    " << std::left << std::setw(11) << kMessageKindNames[k] << std::right
        << std::setw(12) << r.messages[k] << std::setw(12) << r.violations_before[k] << std::setw(8)
        << r.violations_after[k] << "\n";
  out << "  events shifted: " << r.events_shifted << " (" << std::setprecision(2)
      << (r.events ? 100.0 * double(r.events_shifted) / double(r.events) : 0.0)
      << " %), max displacement " << r.max_displacement << " ns, mean " << std::setprecision(1)
      << r.mean_displacement << " ns\n";
  double total = 0;
  for (double d : r.deviation_time)
    total += d;
  out << "  local-interval deviation (share of trace time):";
  for (int c = 0; c < 5; ++c)
    out << " " << kDeviationNames[c] << " " << std::setprecision(3)
        << (total > 0 ? 100.0 * r.deviation_time[c] / total : 0) << "%";
  out << "\n";
  if (r.written)
    out << "  event files copied record by record: " << r.copied_event_files << " of "
        << r.locations
        << (r.copied_event_files < uint64_t(r.locations)
                ? " (the others re-encoded through the OTF2 library)\n"
                : "\n");
  if (r.unknown_events || r.unknown_definitions)
    out << "  warning: records of unknown type (not copied): " << r.unknown_events << " events, "
        << r.unknown_definitions << " definitions\n";
}

void print_json(const Report& r, std::ostream& out) {
  out << "{\n  \"input\": \"" << json_escape(r.input) << "\",\n  \"output\": \""
      << json_escape(r.output) << "\",\n  \"written\": " << (r.written ? "true" : "false")
      << ",\n  \"events\": " << r.events << ",\n  \"locations\": " << r.locations
      << ",\n  \"processes\": " << r.processes
      << ",\n  \"correction_ranks\": " << r.correction_ranks
      << ",\n  \"replay_rounds\": " << r.rounds << ",\n  \"reevaluated_events\": " << r.reevaluated
      << ",\n  \"seconds\": " << r.seconds
      << ",\n  \"phase_seconds\": {\"read\": " << r.read_seconds
      << ", \"replay\": " << r.replay_seconds << ", \"write\": " << r.write_seconds << "}"
      << ",\n  \"lmin_ns\": {\"mpi_intra\": " << r.lmin_intra << ", \"mpi_inter\": " << r.lmin_inter
      << ", \"openmp\": " << r.lmin_omp << ", \"source\": \"" << r.lmin_source
      << "\", \"observed_bound\": {\"mpi_intra\": " << json_ns(r.lmin_observed[0])
      << ", \"mpi_inter\": " << json_ns(r.lmin_observed[1])
      << ", \"openmp\": " << json_ns(r.lmin_observed[2]) << "}, \"observed_by\": {\"mpi_intra\": \""
      << r.lmin_observed_by[0] << "\", \"mpi_inter\": \"" << r.lmin_observed_by[1]
      << "\", \"openmp\": \"" << r.lmin_observed_by[2]
      << "\"}},\n  \"presynced_locations\": " << r.presynced_locations << ",\n";
  out << "  \"location_clocks\": [";
  for (size_t i = 0; i < r.clocks.size(); ++i) {
    const LocationClock& c = r.clocks[i];
    out << (i ? ",\n    " : "\n    ") << "{\"location\": " << c.location
        << ", \"clock_error_ns\": " << (c.clock_error < 0 ? "null" : std::to_string(c.clock_error))
        << ", \"expected_clock_error_ns\": "
        << (c.expected_clock_error < 0 ? "null" : std::to_string(c.expected_clock_error))
        << ", \"clock_measurements\": " << c.measurements << ", \"max_clc_move_ns\": " << c.max_move
        << ", \"events_moved\": " << c.moved
        << ", \"events_moved_beyond_error\": " << c.moved_beyond_error << "}";
  }
  out << "],\n";
  const char* keys[3] = {"messages", "violations_before", "violations_after"};
  const std::array<uint64_t, kMessageKinds>* arrays[3] = {&r.messages, &r.violations_before,
                                                          &r.violations_after};
  for (int a = 0; a < 3; ++a) {
    out << "  \"" << keys[a] << "\": {";
    for (int k = 0; k < kMessageKinds; ++k)
      out << (k ? ", " : "") << "\"" << kMessageKindNames[k] << "\": " << (*arrays[a])[k];
    out << "},\n";
  }
  out << "  \"events_shifted\": " << r.events_shifted << ",\n  \"jumps\": " << r.jumps
      << ",\n  \"max_displacement_ns\": " << r.max_displacement
      << ",\n  \"mean_displacement_ns\": " << r.mean_displacement
      << ",\n  \"deviation_time_ns\": {";
  for (int c = 0; c < 5; ++c)
    out << (c ? ", " : "") << "\"" << kDeviationNames[c] << "\": " << r.deviation_time[c];
  out << "},\n  \"event_records\": {";
  bool first = true;
  for (const auto& [n, c] : r.event_records)
    out << (first ? "" : ", ") << "\"" << n << "\": " << c, first = false;
  out << "},\n  \"definition_records\": {";
  first = true;
  for (const auto& [n, c] : r.definition_records)
    out << (first ? "" : ", ") << "\"" << n << "\": " << c, first = false;
  out << "},\n  \"unknown_event_records\": " << r.unknown_events
      << ",\n  \"unknown_definition_records\": " << r.unknown_definitions
      << ",\n  \"copied_event_files\": " << r.copied_event_files << "\n}\n";
}

} // namespace htrace::correct
