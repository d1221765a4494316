// Drives the recorder directly (no LD_PRELOAD, no wrappers) with a known event sequence so that
// check_archive.py can compare the archive record by record. Run with 2 ranks.
//
//   record_writer write      full sequence incl. a second thread, teams, a derived comm
//   record_writer emergency  a few events, then emergency_flush() instead of finalize()
//   record_writer exit       a few events, then exit(0) without MPI_Finalize
//   record_writer volume N   N Enter/Leave pairs per rank (exercises OTF2's own buffer flushes)
//   record_writer volume-ahead N
//                            the same, converting ahead (convert_while_waiting) inside each pair,
//                            as the wrapper of a receive does before the PMPI call
//   record_writer emergency-race
//                            a second thread records numbered MpiSend events without pause while
//                            the main thread runs emergency_flush(): what reaches the file must be
//                            whole records (tag = bytes = number), numbered 0, 1, 2, ... in order
#include "clock/base_clock.h"
#include "common/log.h"
#include "common/options.h"
#include "record/recorder.h"
#include "record/snapshot.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>
#include <thread>

namespace rec = htrace::record;

namespace {

constexpr int kPreStartPairs = 150; // more than one 4 KiB buffer before start()
constexpr int kIterations = 200;
constexpr int kWorkerPairs = 300;
constexpr int kEarlyPairs = 5;
constexpr std::uint8_t kOpAllreduce = 10; // OTF2_COLLECTIVE_OP_ALLREDUCE

rec::LocationId g_worker_id = 0; // read after join()

void worker(rec::CommId team, int rank) {
  rec::Location* loc = rec::thread();
  if (!loc) return;
  g_worker_id = loc->id();
  rec::add_team_member(team, 1, loc->id());
  const rec::RegionId work =
      rec::register_region("worker_loop", rec::Paradigm::User, rec::RegionRole::Function);
  loc->thread_team_begin(htrace::clock::stamp(), team);
  for (int i = 0; i < kWorkerPairs; ++i) {
    loc->enter(htrace::clock::stamp(), work);
    loc->leave(htrace::clock::stamp(), work);
  }
  loc->thread_acquire_lock(htrace::clock::stamp(), 7, 1);
  loc->thread_release_lock(htrace::clock::stamp(), 7, 1);
  loc->thread_task_switch(htrace::clock::stamp(), team, 0, 1);
  loc->thread_task_complete(htrace::clock::stamp(), team, 0, 1);
  loc->thread_team_end(htrace::clock::stamp(), team);
  (void)rank;
}

// The per-rank line check_archive.py and run_record_test.sh parse.
void print_rank_summary(int rank, const rec::Summary& s) {
  std::printf("RANK %d recorded=%llu written=%llu flushes=%llu clamped=%llu dropped=%llu "
              "largest_clamp_ns=%lld\n",
              rank, static_cast<unsigned long long>(s.events_recorded),
              static_cast<unsigned long long>(s.events_written),
              static_cast<unsigned long long>(s.buffer_flushes),
              static_cast<unsigned long long>(s.timestamps_clamped),
              static_cast<unsigned long long>(s.events_dropped),
              static_cast<long long>(s.largest_clamp_ns));
}

} // namespace

int main(int argc, char** argv) {
  const bool emergency = argc > 1 && std::strcmp(argv[1], "emergency") == 0;
  const bool exit_early = argc > 1 && std::strcmp(argv[1], "exit") == 0;
  const bool emergency_race = argc > 1 && std::strcmp(argv[1], "emergency-race") == 0;
  const bool ahead = argc > 2 && std::strcmp(argv[1], "volume-ahead") == 0;
  const long volume =
      argc > 2 && (ahead || std::strcmp(argv[1], "volume") == 0) ? std::atol(argv[2]) : 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  htrace::OptionsResult options = htrace::parse_options_from_environment();
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", options.error.c_str());
    return 2;
  }
  rec::configure(options.options);
  // As libhtrace's MPI_Init does: the recorder's diagnostics go to HTRACE_LOG_FILE too.
  htrace::log::set_file(options.options.log_file.c_str());

  // Regions registered in a different order on each rank: ids must be unified.
  rec::RegionId compute, send, recv, allreduce;
  if (rank % 2 == 0) {
    compute = rec::register_region("compute", rec::Paradigm::User, rec::RegionRole::Function);
    send = rec::register_region("MPI_Send", rec::Paradigm::Mpi, rec::RegionRole::PointToPoint);
    recv = rec::register_region("MPI_Recv", rec::Paradigm::Mpi, rec::RegionRole::PointToPoint);
    allreduce =
        rec::register_region("MPI_Allreduce", rec::Paradigm::Mpi, rec::RegionRole::Collective);
  } else {
    allreduce =
        rec::register_region("MPI_Allreduce", rec::Paradigm::Mpi, rec::RegionRole::Collective);
    recv = rec::register_region("MPI_Recv", rec::Paradigm::Mpi, rec::RegionRole::PointToPoint);
    send = rec::register_region("MPI_Send", rec::Paradigm::Mpi, rec::RegionRole::PointToPoint);
    compute = rec::register_region("compute", rec::Paradigm::User, rec::RegionRole::Function);
  }

  // A thread records before the main thread does (like an OpenMP worker before MPI_Init): the
  // main thread must still become thread 0 at start(), this one thread 1.
  std::thread early([compute] {
    rec::Location* loc = rec::thread();
    for (int i = 0; i < kEarlyPairs; ++i) {
      loc->enter(htrace::clock::stamp(), compute);
      loc->leave(htrace::clock::stamp(), compute);
    }
  });
  early.join();

  // Events before start() (like OpenMP before MPI_Init): kept, not dropped.
  rec::Location* main_loc = rec::thread();
  for (int i = 0; i < kPreStartPairs; ++i) {
    main_loc->enter(htrace::clock::stamp(), compute);
    main_loc->leave(htrace::clock::stamp(), compute);
  }

  MPI_Comm tracer_comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &tracer_comm);
  if (!rec::start(&tracer_comm)) {
    std::fprintf(stderr, "record_writer: tracing disabled, running untraced\n");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
  }
  if (rec::thread() != main_loc || main_loc->id() != static_cast<rec::LocationId>(rank)) {
    std::fprintf(stderr, "record_writer: main location id %llu != rank %d\n",
                 static_cast<unsigned long long>(main_loc->id()), rank);
    return 1;
  }
  // Rank 1's clock is "ahead" by 5 us: its events are shifted back on the global clock.
  htrace::clock::GlobalTimeMap map;
  map.offset_at_origin_ns = rank == 1 ? 5000 : 0;
  rec::set_global_time_map(map);
  rec::set_archive_property("HTRACE::CLOCK::TIMEBASE", "global");
  rec::set_process_property("HTRACE::CLOCK::INIT_OFFSET", 1000 * rank);

  std::vector<int> world(size), reversed(size);
  for (int r = 0; r < size; ++r)
    world[r] = r, reversed[r] = size - 1 - r;
  const rec::CommId world_id = rec::register_mpi_comm("MPI_COMM_WORLD", world, {}, rec::kNoComm);
  rec::register_mpi_comm("MPI_COMM_SELF", {rank}, {}, rec::kNoComm);
  const rec::CommId dup_id = rec::register_mpi_comm("dup of world", world, {}, world_id);
  const rec::CommId rev_id = rec::register_mpi_comm("reversed", reversed, {}, dup_id);
  const int peer = (rank + 1) % size;
  const std::uint32_t peer_in_rev = static_cast<std::uint32_t>(size - 1 - peer);

  if (exit_early) {
    main_loc->enter(htrace::clock::stamp(), compute);
    main_loc->leave(htrace::clock::stamp(), compute);
    std::exit(0); // the recorder's atexit handler must write locally and never call MPI
  }
  if (emergency) {
    for (int i = 0; i < 10; ++i) {
      main_loc->enter(htrace::clock::stamp(), compute);
      main_loc->leave(htrace::clock::stamp(), compute);
    }
    rec::emergency_flush("record_writer emergency test");
    MPI_Barrier(MPI_COMM_WORLD);
    rec::finalize(); // must be a no-op now
    MPI_Finalize();
    return 0;
  }

  if (emergency_race) {
    // The worker is far into its buffer's later rounds when the flush comes, so a slot that was
    // counted before it was filled would show an older number.
    rec::snapshot::write_initial(); // as MPI_Init does: htrace-salvage reads the run back
    std::atomic<long> recorded{0};
    std::atomic<bool> stop{false};
    std::thread worker([&] {
      rec::Location* loc = rec::thread();
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        loc->mpi_send(htrace::clock::stamp(), static_cast<std::uint32_t>(peer), world_id,
                      static_cast<std::uint32_t>(i), static_cast<std::uint64_t>(i));
        recorded.store(i + 1, std::memory_order_relaxed);
      }
    });
    while (recorded.load() < 200000)
      std::this_thread::yield();
    rec::emergency_flush("record_writer emergency race");
    stop = true;
    worker.join();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
  }

  if (volume > 0) {
    const std::int64_t began = htrace::clock::posix_now(CLOCK_MONOTONIC);
    for (long i = 0; i < volume; ++i) {
      main_loc->enter(htrace::clock::stamp(), compute);
      if (ahead) main_loc->convert_while_waiting();
      main_loc->leave(htrace::clock::stamp(), compute);
    }
    const double ns_per_event =
        double(htrace::clock::posix_now(CLOCK_MONOTONIC) - began) / double(2 * volume);
    rec::finalize();
    std::printf("RANK %d ns_per_event=%.1f (clock read, record, flushes to OTF2 included)\n", rank,
                ns_per_event);
    const rec::Summary s = rec::summary();
    print_rank_summary(rank, s);
    MPI_Finalize();
    return 0;
  }

  const rec::CommId team = rec::register_thread_team(rec::kNoComm, 2);
  rec::add_team_member(team, 0, main_loc->id());
  main_loc->thread_fork(htrace::clock::stamp(), 2);
  std::thread helper(worker, team, rank);
  main_loc->thread_team_begin(htrace::clock::stamp(), team);
  main_loc->thread_task_create(htrace::clock::stamp(), team, 0, 1);

  for (int i = 0; i < kIterations; ++i) {
    main_loc->enter(htrace::clock::stamp(), compute);
    main_loc->leave(htrace::clock::stamp(), compute);
    main_loc->enter(htrace::clock::stamp(), send);
    main_loc->mpi_send(htrace::clock::stamp(), peer_in_rev, rev_id, i, 8 * i);
    main_loc->leave(htrace::clock::stamp(), send);
    main_loc->enter(htrace::clock::stamp(), recv);
    main_loc->mpi_recv(htrace::clock::stamp(), peer_in_rev, rev_id, i, 8 * i);
    main_loc->leave(htrace::clock::stamp(), recv);
    main_loc->enter(htrace::clock::stamp(), allreduce);
    main_loc->mpi_collective_begin(htrace::clock::stamp());
    main_loc->mpi_collective_end(htrace::clock::stamp(), kOpAllreduce, world_id, rec::kNoRank, 8,
                                 8);
    main_loc->leave(htrace::clock::stamp(), allreduce);
  }
  const std::uint64_t req = 42;
  main_loc->mpi_isend(htrace::clock::stamp(), peer_in_rev, rev_id, 99, 16, req);
  main_loc->mpi_request_test(htrace::clock::stamp(), req);
  main_loc->mpi_isend_complete(htrace::clock::stamp(), req);
  main_loc->mpi_irecv_request(htrace::clock::stamp(), req + 1);
  main_loc->mpi_irecv(htrace::clock::stamp(), peer_in_rev, rev_id, 99, 16, req + 1);
  main_loc->mpi_irecv_request(htrace::clock::stamp(), req + 2);
  main_loc->mpi_request_cancelled(htrace::clock::stamp(), req + 2);
  main_loc->mpi_nbc_request(htrace::clock::stamp(), req + 3);
  main_loc->mpi_nbc_complete(htrace::clock::stamp(), world_id, kOpAllreduce, rec::kNoRank, 4, 4,
                             req + 3);
  // A timestamp that goes backwards must be clamped, not dropped (1e6 stamp units: at least
  // 100 us whether a stamp is a TSC tick or a nanosecond).
  const std::int64_t now = htrace::clock::stamp();
  main_loc->enter(now, compute);
  main_loc->leave(now - 1000000, compute);

  helper.join();
  main_loc->thread_team_end(htrace::clock::stamp(), team);
  main_loc->thread_join(htrace::clock::stamp());
  // A second parallel region with the same threads: its team is merged into the first one.
  const rec::CommId team2 = rec::register_thread_team(rec::kNoComm, 2);
  rec::add_team_member(team2, 0, main_loc->id());
  rec::add_team_member(team2, 1, g_worker_id);
  main_loc->thread_team_begin(htrace::clock::stamp(), team2);
  main_loc->thread_team_end(htrace::clock::stamp(), team2);

  rec::finalize();
  const rec::Summary s = rec::summary();
  if (rank == 0)
    std::printf("SUMMARY events_written=%llu bytes=%llu dropped=%llu path=%s\n",
                static_cast<unsigned long long>(s.global_events_written),
                static_cast<unsigned long long>(s.global_bytes_written),
                static_cast<unsigned long long>(s.global_events_dropped), s.archive_path.c_str());
  print_rank_summary(rank, s);
  MPI_Finalize();
  return 0;
}
