#include "correct/engine.h"

#include "correct/archive_reader.h"
#include "correct/archive_writer.h"
#include "correct/definitions.h"
#include "correct/exchange.h"
#include "correct/model_reader.h"
#include "correct/mpi_rank_group.h"
#include "correct/output_directory.h"
#include "correct/partition.h"
#include "correct/replay.h"
#include "format/anchor_file.h"
#include "format/otf2_library.h"
#include "htrace/archive_properties.h"
#include "htrace/version.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <type_traits>

namespace fs = std::filesystem;

namespace htrace::correct {
namespace {

int64_t archive_latency(const Definitions& d, const char* name) {
  auto it = d.archive_properties.find(name);
  if (it == d.archive_properties.end()) return -1;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return -1;
  }
}

Latencies choose_latencies(const Options& o, const Definitions& d, Report& rep) {
  Latencies l;
  l.defs = &d;
  int64_t intra = archive_latency(d, HTRACE_PROP_MIN_LATENCY_INTRA),
          inter = archive_latency(d, HTRACE_PROP_MIN_LATENCY_INTER);
  rep.lmin_source = intra >= 0 || inter >= 0 ? "archive" : "default";
  l.intra = o.lmin_intra_ns >= 0 ? o.lmin_intra_ns : intra >= 0 ? intra : kDefaultLminMpiNs;
  l.inter = o.lmin_inter_ns >= 0 ? o.lmin_inter_ns : inter >= 0 ? inter : kDefaultLminMpiNs;
  l.omp = o.lmin_omp_ns >= 0 ? o.lmin_omp_ns : kDefaultLminOmpNs;
  // Shared memory is not slower than the network: a measured intra-node minimum above the
  // inter-node one comes from a disturbed measurement (seen on oversubscribed runs), and a too
  // large l_min invents violations, so the smaller measurement is used for both.
  if (o.lmin_intra_ns < 0 && o.lmin_inter_ns < 0 && intra >= 0 && inter >= 0 && intra > inter) {
    l.intra = l.inter;
    rep.lmin_source = "archive, intra-node capped at inter-node";
  }
  if (o.lmin_intra_ns >= 0 || o.lmin_inter_ns >= 0 || o.lmin_omp_ns >= 0)
    rep.lmin_source = "command line";
  rep.lmin_base = {l.intra, l.inter, l.omp};
  return l;
}

// The latencies used, lowered to what the trace shows unless the command line fixed them.
void report_latencies(const Options& o, const Replay& replay, Report& rep) {
  const Latencies& used = replay.latencies();
  const ObservedLatencies& seen = replay.stats().observed;
  rep.lmin_intra = used.intra, rep.lmin_inter = used.inter, rep.lmin_omp = used.omp;
  rep.lmin_observed = {seen.intra.ns, seen.inter.ns, seen.omp.ns};
  rep.lmin_observed_by = {describe(seen.intra), describe(seen.inter), describe(seen.omp)};
  const bool lowered =
      (o.lmin_intra_ns < 0 && seen.intra.ns != kNoTime && seen.intra.ns < rep.lmin_base[0]) ||
      (o.lmin_inter_ns < 0 && seen.inter.ns != kNoTime && seen.inter.ns < rep.lmin_base[1]) ||
      (o.lmin_omp_ns < 0 && seen.omp.ns != kNoTime && seen.omp.ns < rep.lmin_base[2]);
  if (lowered) rep.lmin_source += ", lowered to what the trace shows";
}

// The input's archive properties, with the time base marked as corrected (a second correction
// must not apply the clock measurements again) and the latencies used (a second correction of the
// output then finds nothing to do: its observed latencies are at least these).
std::map<std::string, std::string> output_properties(const Definitions& defs, const Report& rep) {
  std::map<std::string, std::string> p = defs.archive_properties;
  if (p.count(HTRACE_PROP_TIMEBASE)) p[HTRACE_PROP_TIMEBASE] = "corrected";
  p[HTRACE_PROP_MIN_LATENCY_INTRA] = std::to_string(rep.lmin_intra);
  p[HTRACE_PROP_MIN_LATENCY_INTER] = std::to_string(rep.lmin_inter);
  p[HTRACE_PROP_CORRECT_VERSION] = HTRACE_VERSION_STRING;
  return p;
}

// Displacement of every event and the deviation classes of every local interval (the hybrid
// paper's Fig. 6), taken from the final times on their way to the writer (one integer pass per
// chunk: it runs over every event of the trace).
// Per location, it also compares what the CLC moved (final minus pre-synchronized input time) with
// the clock error the measurements bound: a move beyond that error is no clock artefact.
class SummarizingTimes final : public TimeSource {
public:
  SummarizingTimes(TimeSource& inner, const LocalModel& model, const Definitions& defs)
      : inner_(inner), model_(model), clocks_(model.locations.size()) {
    for (size_t i = 0; i < clocks_.size(); ++i) {
      const Presync& ps = model.locations[i].presync;
      clocks_[i].location = defs.locations[model.locations[i].location].id;
      clocks_[i].clock_error = ps.measured ? ps.error : -1;
      clocks_[i].expected_clock_error = ps.measured ? ps.expected_error : -1;
      clocks_[i].measurements = ps.measurements;
    }
  }

  void begin(size_t index) override {
    inner_.begin(index);
    done_ = 0;
    if (index == current_)
      totals_ = before_location_;
    else
      before_location_ = totals_, current_ = index;
    LocationClock& c = clocks_[index];
    c.max_move = 0, c.moved = c.moved_beyond_error = 0;
  }

  size_t next(int64_t* out, int64_t* input, size_t max) override {
    const size_t n = inner_.next(out, input, max);
    if (n == 0) return 0;
    // Locals, not members, in the loop: it runs over every event of the trace.
    uint64_t sum = 0; // (unsigned: wraps without harm where the check below discards it)
    int64_t max_disp = totals_.max_disp;
    uint64_t shifted = 0;
    std::array<int64_t, 5> dev{};
    // An interval's change is the change of the displacement d = out - in across it.
    int64_t prev_in = prev_in_, prev_d = prev_d_;
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = input[i];
      const int64_t d = out[i] - in;
      const int64_t ad = d < 0 ? -d : d;
      shifted += d != 0;
      sum += static_cast<uint64_t>(ad); // exact while every |d| < 2^50 (kChunk values)
      max_disp = ad > max_disp ? ad : max_disp;
      const int64_t before = in - prev_in;
      if (before > 0 && (done_ + i) > 0) {
        const int64_t change = d - prev_d;
        const int64_t diff = change < 0 ? -change : change;
        // Relative change classes 0, <1 %, 1-10 %, 10-100 %, >100 %, without a division.
        const int cls = diff == 0             ? 0
                        : diff >= before      ? (diff == before ? 3 : 4)
                        : diff * 100 < before ? 1
                        : diff * 10 < before  ? 2
                                              : 3;
        dev[cls] += before;
      }
      prev_in = in, prev_d = d;
    }
    prev_in_ = prev_in, prev_d_ = prev_d;
    summarize_moves(out, input, n);
    totals_.shifted += shifted;
    totals_.max_disp = max_disp;
    if (max_disp < (int64_t(1) << 50)) {
      totals_.sum_disp += double(sum);
    } else {
      // Moves that large come only from damaged timestamps: summed exactly enough in double.
      for (size_t i = 0; i < n; ++i)
        totals_.sum_disp += std::fabs(double(out[i]) - double(input[i]));
    }
    for (int c = 0; c < 5; ++c)
      totals_.dev[c] += double(dev[c]);
    done_ += n;
    return n;
  }

  // Every location must have been read to its end.
  void finish(RankGroup& comm, Report& rep) {
    Totals& t = totals_;
    comm.allreduce_sum_double(&t.sum_disp, 1);
    comm.allreduce_sum(&t.shifted, 1);
    comm.allreduce_max(&t.max_disp, 1);
    comm.allreduce_sum_double(t.dev.data(), 5);
    rep.events_shifted = t.shifted;
    rep.max_displacement = t.max_disp;
    rep.mean_displacement = rep.events ? t.sum_disp / double(rep.events) : 0;
    rep.deviation_time = t.dev;
    gather_clocks(comm, rep);
  }

private:
  void summarize_moves(const int64_t* out, const int64_t* input, size_t n) {
    LocationClock& c = clocks_[current_];
    const Presync& ps = model_.locations[current_].presync;
    const int64_t error = c.clock_error < 0 ? 0 : c.clock_error;
    // Locals in the loop (it runs over every event); the pre-synchronization decided once.
    int64_t max_move = c.max_move, moved = 0, beyond = 0;
    const auto sweep = [&](auto presynced) {
      for (size_t i = 0; i < n; ++i) {
        const int64_t move = out[i] - presynced(input[i]);
        max_move = move > max_move ? move : max_move;
        moved += move != 0;
        beyond += move > error;
      }
    };
    if (ps.active)
      sweep([&](int64_t t) { return ps.apply(t); });
    else
      sweep([](int64_t t) { return t; });
    c.max_move = max_move, c.moved += moved, c.moved_beyond_error += beyond;
  }

  // Every rank's locations, in location order, on every rank (rank 0 prints them).
  void gather_clocks(RankGroup& comm, Report& rep) {
    constexpr size_t kWords = sizeof(LocationClock) / sizeof(int64_t);
    static_assert(sizeof(LocationClock) == kWords * sizeof(int64_t), "sent as int64 words");
    const std::vector<int64_t> all =
        comm.allgather(reinterpret_cast<const int64_t*>(clocks_.data()), clocks_.size() * kWords);
    rep.clocks.resize(all.size() / kWords);
    static_assert(std::is_trivially_copyable_v<LocationClock>, "copied as words");
    std::memcpy(static_cast<void*>(rep.clocks.data()), all.data(), all.size() * sizeof(int64_t));
    std::sort(
        rep.clocks.begin(), rep.clocks.end(),
        [](const LocationClock& a, const LocationClock& b) { return a.location < b.location; });
  }

  struct Totals {
    double sum_disp = 0;
    uint64_t shifted = 0;
    int64_t max_disp = 0;
    std::array<double, 5> dev{};
  };
  TimeSource& inner_;
  const LocalModel& model_;
  std::vector<LocationClock> clocks_; // per owned location
  size_t done_ = 0;
  int64_t prev_in_ = 0, prev_d_ = 0; // of the last event seen
  Totals totals_;
  // totals_ before the current location began (it may begin again).
  Totals before_location_;
  size_t current_ = SIZE_MAX;
};

// Runs the final times of every location through `times` without writing them (--check).
void drain(TimeSource& times, const LocalModel& m) {
  std::array<int64_t, TimeSource::kChunk> chunk, input;
  for (size_t i = 0; i < m.locations.size(); ++i) {
    times.begin(i);
    while (times.next(chunk.data(), input.data(), chunk.size()) > 0) {
    }
  }
}

void progress(const Options& o, int rank, const char* phase) {
  if (o.progress && rank == 0)
    std::fprintf(stderr, "\rhtrace-correct: %-40s", phase), std::fflush(stderr);
}

Report run(const Options& o, RankGroup& comm) {
  auto start = std::chrono::steady_clock::now();
  const int rank = comm.rank(), size = comm.size();
  Report rep;
  rep.input = o.input, rep.output = o.output, rep.correction_ranks = size;

  std::string anchor = agree(comm, [&] { return format::find_anchor(o.input); });
  TempOutput out; // removed again on any failure
  if (!o.check_only)
    agree(
        comm,
        [&] {
          out = prepare_output(o, comm);
          return std::string();
        },
        ErrorKind::Output);

  ArchiveReader reader(anchor, comm);
  Definitions defs = agree_value(comm, [&] { return read_definitions(reader.get()); });
  rep.processes = static_cast<int>(defs.processes.size());
  rep.locations = static_cast<int>(defs.locations.size());
  std::vector<uint64_t> process_events;
  for (const ProcessInfo& p : defs.processes)
    process_events.push_back(p.events);
  ReplayContext ctx{&defs, &o, choose_latencies(o, defs, rep),
                    assign_processes(process_events, size), &comm};
  std::vector<uint32_t> mine;
  for (size_t p = 0; p < defs.processes.size(); ++p)
    if (ctx.owner[p] == rank) mine.push_back(static_cast<uint32_t>(p));

  progress(o, rank, "reading events");
  LocalModel model;
  agree(comm, [&] {
    reader.open_locations(defs, mine);
    ReadPlan plan;
    plan.rewrite = !o.check_only;
    plan.decodable = [&](OTF2_LocationRef id) { return reader.decodable(id); };
    plan.id_maps = [&](OTF2_LocationRef id) { return reader.id_maps(id); };
    plan.event_dir = reader.event_dir();
    plan.chunk_size = reader.event_chunk_size();
    read_models(reader.get(), defs, mine, plan, model);
    return std::string();
  });
  rep.events = model.events;
  comm.allreduce_sum(&rep.events, 1);

  auto lap = [&, last = start]() mutable {
    auto now = std::chrono::steady_clock::now();
    double d = std::chrono::duration<double>(now - last).count();
    last = now;
    return d;
  };
  rep.read_seconds = lap();
  progress(o, rank, "replaying (controlled logical clock)");
  Replay replay(ctx, model);
  replay.run();
  report_latencies(o, replay, rep);
  SummarizingTimes times(replay, model, defs);
  if (o.check_only) {
    drain(times, model);
    rep.replay_seconds = lap();
  } else {
    rep.replay_seconds = lap();
    // The backward amortization's ramps are applied location by location as the events are
    // written, so no corrected timestamp per event is ever held.
    progress(o, rank, "writing corrected archive");
    write_corrected(reader, defs, output_properties(defs, rep), model, times, out, comm, rep);
    reader.close_events();
    out.commit(o, 2 * defs.locations.size()); // an event and a definition file each
    rep.written = true;
    rep.write_seconds = lap();
  }
  times.finish(comm, rep);
  const ReplayStats& st = replay.stats();
  const auto sum = [&](const auto& local, auto& all) {
    all = local;
    comm.allreduce_sum(all.data(), all.size());
  };
  sum(st.messages, rep.messages);
  sum(st.violations_before, rep.violations_before);
  sum(st.violations_after, rep.violations_after);
  const auto sum_one = [&](uint64_t local, uint64_t& all) {
    all = local;
    comm.allreduce_sum(&all, 1);
  };
  sum_one(st.jumps, rep.jumps);
  sum_one(st.reevaluated, rep.reevaluated);
  rep.rounds = st.rounds; // the same on every rank
  sum_one(st.presynced_locations, rep.presynced_locations);
  progress(o, rank, "done");
  if (o.progress && rank == 0) std::fputc('\n', stderr);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

} // namespace

Report correct_archive(const Options& o, MPI_Comm comm) {
  MpiRankGroup ranks(comm);
  return correct_archive(o, ranks);
}

Report correct_archive(const Options& o, RankGroup& ranks) {
  format::quiet_otf2_errors();
  try {
    return run(o, ranks);
  } catch (const Error& e) {
    // Messages that name no path are about the input.
    const std::string msg = e.what();
    if (!msg.empty() && msg[0] == '\'') throw;
    throw Error(e.kind(), "'" + o.input + "': " + msg, e.agreed());
  }
}

} // namespace htrace::correct
