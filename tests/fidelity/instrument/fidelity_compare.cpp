// fidelity_compare: what a correction did to a trace, and how far its result is from the truth.
//
//   fidelity_compare IN OUT [--lmin NS] [--probe-region NAME]
//                    [--truth-offsets NS,NS,...]     truth = IN time - offset of the world rank
//                    [--truth-probes FILE]           truth of the probe region's Enters
//
// IN is an archive, OUT its corrected copy (same events in the same order per location, only
// timestamps differ). Prints one JSON object:
//   events, events_moved, displacement_ns {min, median, p99, max} (OUT - IN over all events) and
//   abs_displacement_ns (the same of |OUT - IN|);
//   messages (p2p, matched from the records) and, for IN and OUT, how many are received before
//   their send + 0 and + --lmin, and the smallest send->receive gap;
//   deviation_time_ns: time covered by local intervals (weighted by their IN length) whose length
//   changed by 0, < 1 %, 1-10 %, 10-100 %, > 100 %, and split_equal_timestamps (intervals of
//   length 0 in IN that are not 0 in OUT);
//   truth (when given): err = OUT - truth - shift, shift = the median of OUT - truth over world
//   rank 0's own location; |err| median / p99 / max over all truth points, and the largest
//   per-location median, signed median and max per rank; truth_in: the same for IN (the error
//   before correction).
// --truth-probes FILE: lines "RANK TRUTH_NS"; the k-th line of a rank is the truth of the k-th
// Enter of --probe-region (default MPI_Barrier) on that rank's own location. The reading precedes
// the Enter: a preemption in between delays that one Enter against its truth, which no clock
// does. Such points (in IN, more than 2 us later than the median of their 16 neighbours) are
// left out of the statistics and counted: probe_delays, and the longest, probe_delay_max_ns;
// round_spread_ns {rounds, median, p90, max}: per barrier, how far apart the ranks' times of it
// are after one affine fit of OUT to the truth (0 without --truth-probes).
// Exit code 0, or 1 with a message on stderr if the archives do not correspond.
#include "trace_times.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using fidelity::Location;
using fidelity::Trace;

struct Options {
  std::string in, out;
  int64_t lmin = 0;
  std::string probe_region = "MPI_Barrier";
  std::vector<int64_t> truth_offsets; // per world rank
  std::string truth_probes;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "fidelity_compare: %s\nusage: fidelity_compare IN OUT [--lmin NS] "
               "[--probe-region NAME] [--truth-offsets NS,...] [--truth-probes FILE]\n",
               why.c_str());
  std::exit(2);
}

std::vector<int64_t> parse_list(const std::string& text) {
  std::vector<int64_t> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    values.push_back(std::stoll(item));
  return values;
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--lmin")
      o.lmin = std::stoll(value());
    else if (arg == "--probe-region")
      o.probe_region = value();
    else if (arg == "--truth-offsets")
      o.truth_offsets = parse_list(value());
    else if (arg == "--truth-probes")
      o.truth_probes = value();
    else if (arg.rfind("--", 0) == 0)
      usage("unknown option " + arg);
    else
      positional.push_back(arg);
  }
  if (positional.size() != 2) usage("expected IN and OUT");
  o.in = positional[0], o.out = positional[1];
  return o;
}

// Nearest-rank percentile of v (reordered); 0 for an empty vector.
int64_t percentile(std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = size_t(p * double(v.size()));
  if (k >= v.size()) k = v.size() - 1;
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k];
}

struct Distribution {
  int64_t min = 0, median = 0, p99 = 0, max = 0;
  size_t count = 0;
};

Distribution distribution(std::vector<int64_t> v) {
  Distribution d;
  d.count = v.size();
  if (v.empty()) return d;
  d.min = *std::min_element(v.begin(), v.end());
  d.max = *std::max_element(v.begin(), v.end());
  d.median = percentile(v, 0.5);
  d.p99 = percentile(v, 0.99);
  return d;
}

std::string json(const Distribution& d) {
  char text[200];
  std::snprintf(text, sizeof text,
                "{\"count\": %zu, \"min\": %" PRId64 ", \"median\": %" PRId64 ", \"p99\": %" PRId64
                ", \"max\": %" PRId64 "}",
                d.count, d.min, d.median, d.p99, d.max);
  return text;
}

// The corrected archive must hold the same locations with the same number of events.
void require_same_shape(const Trace& in, const Trace& out) {
  if (in.locations.size() != out.locations.size())
    throw std::runtime_error("IN and OUT have different numbers of locations");
  for (size_t i = 0; i < in.locations.size(); ++i) {
    const Location &a = in.locations[i], &b = out.locations[i];
    if (a.id != b.id || a.times.size() != b.times.size())
      throw std::runtime_error(
          "location " + std::to_string(a.id) + ": IN and OUT differ in id or event count (" +
          std::to_string(a.times.size()) + " vs " + std::to_string(b.times.size()) + ")");
  }
}

struct DisplacementStats {
  uint64_t events = 0, moved = 0;
  Distribution displacement; // OUT - IN
  Distribution magnitude;    // |OUT - IN|: a move backward counts as much as one forward
};

DisplacementStats displacement(const Trace& in, const Trace& out) {
  DisplacementStats s;
  std::vector<int64_t> all, magnitudes;
  for (size_t l = 0; l < in.locations.size(); ++l) {
    const auto &a = in.locations[l].times, &b = out.locations[l].times;
    for (size_t i = 0; i < a.size(); ++i) {
      const int64_t d = int64_t(b[i] - a[i]);
      all.push_back(d);
      magnitudes.push_back(std::llabs(d));
      s.moved += d != 0;
    }
  }
  s.events = all.size();
  s.displacement = distribution(std::move(all));
  s.magnitude = distribution(std::move(magnitudes));
  return s;
}

// Deviation classes of the hybrid CLC paper's Fig. 6: time covered by local intervals, by how much
// their length changed.
struct Deviation {
  static constexpr int kClasses = 5; // 0, < 1 %, 1-10 %, 10-100 %, > 100 %
  uint64_t time_ns[kClasses] = {};
  uint64_t split_equal = 0; // IN length 0, OUT length not 0
};

int deviation_class(uint64_t in_len, uint64_t out_len) {
  if (in_len == out_len) return 0;
  const double rel = (double(out_len) - double(in_len)) / double(in_len);
  const double change = rel < 0 ? -rel : rel;
  return change < 0.01 ? 1 : change < 0.1 ? 2 : change <= 1.0 ? 3 : 4;
}

Deviation deviation(const Trace& in, const Trace& out) {
  Deviation d;
  for (size_t l = 0; l < in.locations.size(); ++l) {
    const auto &a = in.locations[l].times, &b = out.locations[l].times;
    for (size_t i = 1; i < a.size(); ++i) {
      // Times within a location never go back in either archive (OTF2 requires it); guard anyway.
      const uint64_t in_len = a[i] >= a[i - 1] ? a[i] - a[i - 1] : 0;
      const uint64_t out_len = b[i] >= b[i - 1] ? b[i] - b[i - 1] : 0;
      if (in_len == 0) {
        d.split_equal += out_len != 0;
        continue;
      }
      d.time_ns[deviation_class(in_len, out_len)] += in_len;
    }
  }
  return d;
}

struct MessageStats {
  uint64_t before_send = 0;      // receive < send
  uint64_t before_send_lmin = 0; // receive < send + lmin
  int64_t min_gap = 0;           // smallest receive - send
};

MessageStats message_stats(const Trace& matched, const Trace& times, int64_t lmin) {
  MessageStats s;
  bool first = true;
  for (const auto& m : matched.messages) {
    const int64_t send = int64_t(times.locations[m.send_location].times[m.send_position]);
    const int64_t recv = int64_t(times.locations[m.recv_location].times[m.recv_position]);
    const int64_t gap = recv - send;
    s.before_send += gap < 0;
    s.before_send_lmin += gap < lmin;
    s.min_gap = first ? gap : std::min(s.min_gap, gap);
    first = false;
  }
  return s;
}

std::string json(const MessageStats& s) {
  char text[200];
  std::snprintf(text, sizeof text,
                "{\"receive_before_send\": %" PRIu64 ", \"receive_before_send_plus_lmin\": %" PRIu64
                ", \"min_gap_ns\": %" PRId64 "}",
                s.before_send, s.before_send_lmin, s.min_gap);
  return text;
}

// A truth point: location index, event position, true time.
struct TruthPoint {
  size_t location;
  size_t position;
  int64_t truth;
  int64_t delay = 0;       // of the Enter after the probe reading, beyond its neighbours' (0: none)
  size_t round = kNoRound; // --truth-probes: the k-th probe of every rank is one barrier

  static constexpr size_t kNoRound = size_t(-1);
};

// Marks the points of one location whose Enter came late after the probe reading: IN - truth
// above the median of the 8 points on either side by more than kProbeDelayNs. A clock's error
// changes by nanoseconds between neighbours; a jump of the clock moves a run of points, not one.
constexpr int64_t kProbeDelayNs = 2000;
void mark_probe_delays(const Location& loc, std::vector<TruthPoint>& points, size_t first) {
  const size_t n = points.size() - first;
  std::vector<int64_t> gap(n);
  for (size_t k = 0; k < n; ++k)
    gap[k] = int64_t(loc.times[points[first + k].position]) - points[first + k].truth;
  constexpr size_t kSide = 8;
  for (size_t k = 0; k < n; ++k) {
    std::vector<int64_t> around;
    for (size_t j = k >= kSide ? k - kSide : 0; j <= std::min(n - 1, k + kSide); ++j)
      if (j != k) around.push_back(gap[j]);
    if (around.empty()) continue;
    std::nth_element(around.begin(), around.begin() + around.size() / 2, around.end());
    const int64_t excess = gap[k] - around[around.size() / 2];
    if (excess > kProbeDelayNs) points[first + k].delay = excess;
  }
}

std::vector<TruthPoint> truth_from_offsets(const Trace& in, const std::vector<int64_t>& offsets) {
  std::vector<TruthPoint> points;
  for (size_t l = 0; l < in.locations.size(); ++l) {
    const Location& loc = in.locations[l];
    if (loc.world_rank < 0 || size_t(loc.world_rank) >= offsets.size())
      throw std::runtime_error("--truth-offsets has no entry for world rank " +
                               std::to_string(loc.world_rank));
    for (size_t i = 0; i < loc.times.size(); ++i)
      points.push_back({l, i, int64_t(loc.times[i]) - offsets[size_t(loc.world_rank)]});
  }
  return points;
}

std::vector<TruthPoint> truth_from_probes(const Trace& in, const std::string& file,
                                          const std::string& region) {
  std::map<int, std::vector<int64_t>> probes;
  std::ifstream text(file);
  if (!text) throw std::runtime_error("cannot read " + file);
  int rank;
  long long truth;
  while (text >> rank >> truth)
    probes[rank].push_back(truth);
  std::vector<TruthPoint> points;
  for (size_t l = 0; l < in.locations.size(); ++l) {
    const Location& loc = in.locations[l];
    if (!loc.master) continue;
    const auto& mine = probes[loc.world_rank];
    if (mine.size() != loc.probe_enters.size())
      throw std::runtime_error("rank " + std::to_string(loc.world_rank) + ": " +
                               std::to_string(mine.size()) + " probe readings but " +
                               std::to_string(loc.probe_enters.size()) + " Enters of " + region);
    const size_t first = points.size();
    for (size_t k = 0; k < mine.size(); ++k)
      points.push_back({l, loc.probe_enters[k], mine[k], 0, k});
    mark_probe_delays(loc, points, first);
  }
  return points;
}

struct TruthStats {
  int64_t shift = 0;
  Distribution error; // |OUT - truth - shift|
  int64_t worst_location_median = 0;
  int worst_location_rank = -1;
  std::map<int, int64_t> signed_medians; // per rank's own location: median of OUT - truth - shift
  std::map<int, int64_t> max_by_rank;    // per rank's own location: max |OUT - truth - shift|
  size_t probe_delays = 0;               // points left out (TruthPoint::delay)
  int64_t probe_delay_max = 0;
  // --truth-probes: per barrier, max - min over the ranks of OUT minus one affine fit of OUT to
  // the truth (all points): how far apart the ranks put one moment.
  size_t rounds = 0;
  int64_t round_spread_median = 0, round_spread_p90 = 0, round_spread_max = 0;
};

// Least squares OUT = a + b truth over the points kept, in doubles around their means (times
// are ~1e13 ns, differences within a run ~1e11: well inside a double's 53 bits).
void round_spreads(const std::vector<TruthPoint>& points, const Trace& out, TruthStats& s) {
  std::vector<const TruthPoint*> kept;
  for (const auto& p : points)
    if (!p.delay && p.round != TruthPoint::kNoRound) kept.push_back(&p);
  if (kept.size() < 2) return;
  const auto time = [&](const TruthPoint& p) {
    return int64_t(out.locations[p.location].times[p.position]);
  };
  const int64_t t0 = kept.front()->truth, o0 = time(*kept.front());
  double mx = 0, my = 0;
  for (const TruthPoint* p : kept)
    mx += double(p->truth - t0), my += double(time(*p) - o0);
  mx /= double(kept.size()), my /= double(kept.size());
  double sxx = 0, sxy = 0;
  for (const TruthPoint* p : kept) {
    const double x = double(p->truth - t0) - mx, y = double(time(*p) - o0) - my;
    sxx += x * x, sxy += x * y;
  }
  const double b = sxx > 0 ? sxy / sxx : 1.0;
  std::map<size_t, std::pair<double, double>> range; // per round: min, max residual
  for (const TruthPoint* p : kept) {
    const double r = double(time(*p) - o0) - my - b * (double(p->truth - t0) - mx);
    auto [it, fresh] = range.try_emplace(p->round, r, r);
    if (!fresh) it->second = {std::min(it->second.first, r), std::max(it->second.second, r)};
  }
  std::vector<int64_t> spreads;
  for (const auto& [round, mm] : range)
    spreads.push_back(std::llround(mm.second - mm.first));
  s.rounds = spreads.size();
  s.round_spread_max = *std::max_element(spreads.begin(), spreads.end());
  s.round_spread_p90 = percentile(spreads, 0.9);
  s.round_spread_median = percentile(spreads, 0.5);
}

// `out` is the archive judged: the corrected one, or the input itself for the error before.
TruthStats truth_stats(const Trace& in, const Trace& out, const std::vector<TruthPoint>& points) {
  auto signed_error = [&](const TruthPoint& p) {
    return int64_t(out.locations[p.location].times[p.position]) - p.truth;
  };
  std::vector<int64_t> rank0;
  for (const auto& p : points)
    if (!p.delay && in.locations[p.location].master && in.locations[p.location].world_rank == 0)
      rank0.push_back(signed_error(p));
  if (rank0.empty()) throw std::runtime_error("no truth point on world rank 0's location");
  TruthStats s;
  s.shift = percentile(rank0, 0.5);
  std::vector<int64_t> all;
  std::map<size_t, std::vector<int64_t>> per_location, signed_per_location;
  for (const auto& p : points) {
    if (p.delay) {
      s.probe_delays++;
      s.probe_delay_max = std::max(s.probe_delay_max, p.delay);
      continue;
    }
    const int64_t e = signed_error(p) - s.shift;
    all.push_back(std::llabs(e));
    per_location[p.location].push_back(std::llabs(e));
    signed_per_location[p.location].push_back(e);
  }
  s.error = distribution(std::move(all));
  round_spreads(points, out, s);
  for (auto& [l, errors] : per_location) {
    const int64_t median = percentile(errors, 0.5);
    if (median >= s.worst_location_median) {
      s.worst_location_median = median;
      s.worst_location_rank = in.locations[l].world_rank;
    }
    if (in.locations[l].master) {
      s.signed_medians[in.locations[l].world_rank] = percentile(signed_per_location[l], 0.5);
      s.max_by_rank[in.locations[l].world_rank] = *std::max_element(errors.begin(), errors.end());
    }
  }
  return s;
}

// {"rank": value, ...}
std::string json(const std::map<int, int64_t>& by_rank) {
  std::string text;
  for (const auto& [rank, value] : by_rank)
    text += (text.empty() ? "{\"" : ", \"") + std::to_string(rank) + "\": " + std::to_string(value);
  return text.empty() ? "{}" : text + "}";
}

std::string json(const TruthStats& t, size_t points) {
  char text[500];
  std::snprintf(text, sizeof text,
                "{\"points\": %zu, \"probe_delays\": %zu, \"probe_delay_max_ns\": %" PRId64
                ", \"shift_ns\": %" PRId64
                ", \"abs_error_ns\": %s, \"worst_location_median_ns\": %" PRId64
                ", \"worst_location_rank\": %d, \"signed_median_by_rank_ns\": ",
                points, t.probe_delays, t.probe_delay_max, t.shift, json(t.error).c_str(),
                t.worst_location_median, t.worst_location_rank);
  char spread[200];
  std::snprintf(spread, sizeof spread,
                ", \"round_spread_ns\": {\"rounds\": %zu, \"median\": %" PRId64
                ", \"p90\": %" PRId64 ", \"max\": %" PRId64 "}",
                t.rounds, t.round_spread_median, t.round_spread_p90, t.round_spread_max);
  return text + json(t.signed_medians) + ", \"max_by_rank_ns\": " + json(t.max_by_rank) + spread +
         "}";
}

void print_report(const Options& o, const Trace& in, const Trace& out,
                  const std::vector<TruthPoint>* truth) {
  const DisplacementStats disp = displacement(in, out);
  const Deviation dev = deviation(in, out);
  std::printf("{\n  \"locations\": %zu,\n  \"events\": %" PRIu64 ",\n  \"events_moved\": %" PRIu64
              ",\n  \"displacement_ns\": %s,\n  \"abs_displacement_ns\": %s,\n",
              in.locations.size(), disp.events, disp.moved, json(disp.displacement).c_str(),
              json(disp.magnitude).c_str());
  std::printf("  \"messages\": %zu,\n  \"unmatched_p2p\": %" PRIu64
              ",\n  \"unresolved_p2p\": %" PRIu64 ",\n  \"lmin_ns\": %" PRId64 ",\n",
              in.messages.size(), in.unmatched, in.unresolved, o.lmin);
  std::printf("  \"p2p_in\": %s,\n  \"p2p_out\": %s,\n",
              json(message_stats(in, in, o.lmin)).c_str(),
              json(message_stats(in, out, o.lmin)).c_str());
  std::printf("  \"deviation_time_ns\": {\"0\": %" PRIu64 ", \"<1%%\": %" PRIu64
              ", \"1-10%%\": %" PRIu64 ", \"10-100%%\": %" PRIu64 ", \">100%%\": %" PRIu64 "},\n",
              dev.time_ns[0], dev.time_ns[1], dev.time_ns[2], dev.time_ns[3], dev.time_ns[4]);
  std::printf("  \"split_equal_timestamps\": %" PRIu64, dev.split_equal);
  if (truth) {
    std::printf(",\n  \"truth\": %s,\n  \"truth_in\": %s",
                json(truth_stats(in, out, *truth), truth->size()).c_str(),
                json(truth_stats(in, in, *truth), truth->size()).c_str());
  }
  std::printf("\n}\n");
}

} // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  try {
    fidelity::ReadOptions in_options;
    in_options.messages = true;
    if (!o.truth_probes.empty()) in_options.probe_region = o.probe_region;
    const Trace in = fidelity::read_trace(o.in, in_options);
    const Trace out = fidelity::read_trace(o.out, {});
    require_same_shape(in, out);
    std::vector<TruthPoint> truth;
    if (!o.truth_offsets.empty())
      truth = truth_from_offsets(in, o.truth_offsets);
    else if (!o.truth_probes.empty())
      truth = truth_from_probes(in, o.truth_probes, o.probe_region);
    print_report(o, in, out, truth.empty() ? nullptr : &truth);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fidelity_compare: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
