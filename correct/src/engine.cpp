#include "correct/engine.h"

#include "correct/archive_io.h"
#include "correct/definitions.h"
#include "correct/model_reader.h"
#include "correct/replay.h"
#include "htrace/archive_properties.h"

#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>

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
  rep.lmin_intra = l.intra, rep.lmin_inter = l.inter, rep.lmin_omp = l.omp;
  return l;
}

// Contiguous blocks of processes with about equal event counts per correction rank.
std::vector<int> partition(const Definitions& d, int size) {
  uint64_t total = 0;
  for (const ProcessInfo& p : d.processes)
    total += p.events + 1;
  std::vector<int> owner(d.processes.size());
  uint64_t acc = 0;
  for (size_t i = 0; i < d.processes.size(); ++i) {
    owner[i] =
        static_cast<int>(std::min<uint64_t>(size - 1, (acc * size) / std::max<uint64_t>(total, 1)));
    acc += d.processes[i].events + 1;
  }
  return owner;
}

// Displacement of every event and the deviation classes of every local interval (the hybrid
// paper's Fig. 6), in one integer pass per location: it runs over every event of the trace.
void summarize(const LocalModel& m, Report& rep, MPI_Comm comm) {
  double sum_disp = 0;
  uint64_t shifted = 0;
  int64_t max_disp = 0;
  std::array<double, 5> dev{};
  for (const LocationModel& loc : m.locations) {
    const size_t n = loc.lc.size();
    if (n == 0) continue;
    const int64_t* in = loc.input.data();
    const int64_t* lc = loc.lc.data();
    int64_t loc_sum = 0, loc_max = 0;
    std::array<int64_t, 5> loc_dev{};
    for (size_t i = 0; i < n; ++i) {
      const int64_t d = lc[i] - in[i];
      const int64_t ad = d < 0 ? -d : d;
      shifted += d != 0;
      loc_sum += ad;
      if ((i & 4095) == 4095) sum_disp += double(loc_sum), loc_sum = 0; // never overflows
      loc_max = ad > loc_max ? ad : loc_max;
      if (i == 0) continue;
      const int64_t before = in[i] - in[i - 1];
      if (before <= 0) continue;
      const int64_t change = (lc[i] - lc[i - 1]) - before;
      const int64_t diff = change < 0 ? -change : change;
      // Relative change classes 0, <1 %, 1-10 %, 10-100 %, >100 %, without a division.
      const int cls = diff == 0             ? 0
                      : diff >= before      ? (diff == before ? 3 : 4)
                      : diff * 100 < before ? 1
                      : diff * 10 < before  ? 2
                                            : 3;
      loc_dev[cls] += before;
    }
    sum_disp += double(loc_sum);
    max_disp = std::max(max_disp, loc_max);
    for (int c = 0; c < 5; ++c)
      dev[c] += double(loc_dev[c]);
  }
  MPI_Allreduce(MPI_IN_PLACE, &sum_disp, 1, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &shifted, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &max_disp, 1, MPI_INT64_T, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, dev.data(), 5, MPI_DOUBLE, MPI_SUM, comm);
  rep.events_shifted = shifted;
  rep.max_displacement = max_disp;
  rep.mean_displacement = rep.events ? sum_disp / double(rep.events) : 0;
  rep.deviation_time = dev;
}

void progress(const Options& o, int rank, const char* phase) {
  if (o.progress && rank == 0)
    std::fprintf(stderr, "\rhtrace-correct: %-40s", phase), std::fflush(stderr);
}

} // namespace

namespace {
Report run(const Options& o, MPI_Comm comm);
// OTF2 prints its own diagnostics; ours name the path and the location instead.
OTF2_ErrorCode quiet_otf2(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                          const char*, va_list) {
  return code;
}
} // namespace

Report correct_archive(const Options& o, MPI_Comm comm) {
  OTF2_Error_RegisterCallback(quiet_otf2, nullptr);
  try {
    return run(o, comm);
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    if (!msg.empty() && msg[0] == '\'') throw;
    throw std::runtime_error("'" + o.input + "': " + msg);
  }
}

namespace {
Report run(const Options& o, MPI_Comm comm) {
  auto start = std::chrono::steady_clock::now();
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Report rep;
  rep.input = o.input, rep.output = o.output, rep.correction_ranks = size;

  std::string anchor = agree(comm, [&] { return find_anchor(o.input); });
  TempOutput out;
  if (!o.check_only)
    agree(comm, [&] {
      out = prepare_output(o, comm);
      return std::string();
    });

  ArchiveReader reader(anchor, comm);
  Definitions defs = agree_value(comm, [&] { return read_definitions(reader.get()); });
  rep.processes = static_cast<int>(defs.processes.size());
  rep.locations = static_cast<int>(defs.locations.size());
  ReplayContext ctx{&defs, &o,  choose_latencies(o, defs, rep), partition(defs, size), comm,
                    rank,  size};
  std::vector<uint32_t> mine;
  for (size_t p = 0; p < defs.processes.size(); ++p)
    if (ctx.owner[p] == rank) mine.push_back(static_cast<uint32_t>(p));

  progress(o, rank, "reading events");
  LocalModel model;
  agree(comm, [&] {
    reader.open_locations(defs, mine);
    read_models(reader.get(), defs, mine, /*keep_records=*/!o.check_only, model);
    reader.close_events();
    return std::string();
  });
  rep.events = model.events;
  MPI_Allreduce(MPI_IN_PLACE, &rep.events, 1, MPI_UINT64_T, MPI_SUM, comm);

  auto lap = [&, last = start]() mutable {
    auto now = std::chrono::steady_clock::now();
    double d = std::chrono::duration<double>(now - last).count();
    last = now;
    return d;
  };
  rep.read_seconds = lap();
  progress(o, rank, "replaying (controlled logical clock)");
  ReplayStats st = run_replay(ctx, model);
  MPI_Allreduce(st.messages.data(), rep.messages.data(), kMessageKinds, MPI_UINT64_T, MPI_SUM,
                comm);
  MPI_Allreduce(st.violations_before.data(), rep.violations_before.data(), kMessageKinds,
                MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(st.violations_after.data(), rep.violations_after.data(), kMessageKinds,
                MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(&st.jumps, &rep.jumps, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(&st.reevaluated, &rep.reevaluated, 1, MPI_UINT64_T, MPI_SUM, comm);
  rep.rounds = st.rounds; // the same on every rank
  MPI_Allreduce(&st.presynced_locations, &rep.presynced_locations, 1, MPI_UINT64_T, MPI_SUM, comm);
  summarize(model, rep, comm);
  rep.replay_seconds = lap();

  if (!o.check_only) {
    progress(o, rank, "writing corrected archive");
    write_corrected(reader, defs, model, out, comm, rep);
    agree(comm, [&] {
      commit_output(out, o, comm);
      return std::string();
    });
    rep.written = true;
    rep.write_seconds = lap();
  }
  progress(o, rank, "done");
  if (o.progress && rank == 0) std::fputc('\n', stderr);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}
} // namespace

} // namespace htrace::correct
