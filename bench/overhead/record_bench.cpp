// The recorder alone, without MPI calls in between: what a traced point-to-point call costs the
// thread in stamps, records and (amortized) buffer conversion and event-file writes. One rank.
// Each "call" is Enter, MpiSend (or MpiRecv), Leave with two clock reads, as a traced
// MPI_Send/MPI_Recv records them. Calls run in batches of 64, each batch timed: the whole time
// per call includes every flush; the median batch is the hot path alone (a batch that converts a
// buffer is an outlier); their difference is the conversion and file writing per call.
// usage: record-bench [CALLS (2000000) [REPS (11)]], HTRACE_* options apply; with AHEAD set in
// the environment each call converts ahead before its receive (Location::convert_while_waiting),
// as a traced MPI_Recv does.
#include "clock/base_clock.h"
#include "common/options.h"
#include "record/recorder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mpi.h>
#include <vector>

namespace rec = htrace::record;

namespace {

constexpr long kBatch = 64;

struct Rep {
  double whole = 0; ///< ns per call, everything included
  double hot = 0;   ///< ns per call in the median batch
};

Rep run(rec::Location& loc, long calls, rec::RegionId send, rec::RegionId recv,
        std::vector<std::int64_t>& batches, bool ahead) {
  batches.clear();
  const std::int64_t begin = htrace::clock::posix_now(CLOCK_MONOTONIC);
  std::int64_t last = begin;
  for (long done = 0; done < calls; done += kBatch) {
    for (long i = 0; i < kBatch; i += 2) {
      std::uint64_t t = htrace::clock::stamp();
      loc.enter(t, send);
      loc.mpi_send(t, 1, 0, 7, 0);
      loc.leave(htrace::clock::stamp(), send);
      loc.enter(htrace::clock::stamp(), recv);
      if (ahead) loc.convert_while_waiting();
      t = htrace::clock::stamp();
      loc.mpi_recv(t, 1, 0, 7, 0);
      loc.leave(t, recv);
    }
    const std::int64_t now = htrace::clock::posix_now(CLOCK_MONOTONIC);
    batches.push_back(now - last);
    last = now;
  }
  std::nth_element(batches.begin(), batches.begin() + batches.size() / 2, batches.end());
  return {static_cast<double>(last - begin) / static_cast<double>(calls),
          static_cast<double>(batches[batches.size() / 2]) / kBatch};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 11;
  const bool ahead = std::getenv("AHEAD") != nullptr;
  MPI_Init(&argc, &argv);
  const htrace::OptionsResult options = htrace::parse_options_from_environment();
  if (!options.ok()) {
    std::fprintf(stderr, "record-bench: %s\n", options.error.c_str());
    return 2;
  }
  rec::configure(options.options);
  htrace::clock::choose_stamp_source(options.options.tsc_stamps);
  MPI_Comm comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (!rec::start(&comm)) return 1;
  rec::set_global_time_map(htrace::clock::GlobalTimeMap{});
  const rec::RegionId send =
      rec::register_region("MPI_Send", rec::Paradigm::Mpi, rec::RegionRole::PointToPoint);
  const rec::RegionId recv =
      rec::register_region("MPI_Recv", rec::Paradigm::Mpi, rec::RegionRole::PointToPoint);
  rec::Location* loc = rec::thread();

  std::vector<std::int64_t> batches;
  batches.reserve(static_cast<std::size_t>(calls / kBatch + 1));
  run(*loc, calls / 10, send, recv, batches, ahead); // warm-up
  std::vector<double> whole, hot;
  const std::uint64_t flushes_before = rec::summary().buffer_flushes;
  for (int r = 0; r < reps; ++r) {
    const Rep rep = run(*loc, calls, send, recv, batches, ahead);
    whole.push_back(rep.whole);
    hot.push_back(rep.hot);
  }
  const std::uint64_t flushes = rec::summary().buffer_flushes - flushes_before;
  const double w = median(whole), h = median(hot);
  std::printf(
      "record-bench: ns per call (median of %d reps of %ld calls): whole %.2f [%.2f..%.2f], "
      "hot path %.2f, conversion and writes %.2f; %.0f flushes per rep, stamps %s\n",
      reps, calls, w, *std::min_element(whole.begin(), whole.end()),
      *std::max_element(whole.begin(), whole.end()), h, w - h, static_cast<double>(flushes) / reps,
      htrace::clock::stamp_kind() == htrace::clock::StampKind::Tsc ? "tsc" : "clock");
  rec::finalize();
  MPI_Finalize();
  return 0;
}
