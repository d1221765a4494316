// What a process keeps on disk so that its events can be salvaged when the run ends badly
// (MPI_Abort, a signal, SIGKILL, a full disk): without MPI_Finalize there are no global
// definitions, and OTF2 readers cannot open the event files. `htrace-salvage` rebuilds them from
// these files alone (shared by the recorder and htrace-salvage, which rebuilds archives from the
// same pieces; not installed).
//
// Per rank, in `<archive>/salvage/`:
//  - `<rank>.defs`: the rank's definitions (regions, communicators, teams, locations, clock
//    measurements from MPI_Init, host, one-sided windows and MPI-IO files and handles) and rank
//    0's archive properties; written right after
//    MPI_Init's clock synchronization and rewritten atomically (temporary + rename) whenever they
//    changed, before a buffer is written, so every event that reaches an event file has its
//    definitions on disk first.
//  - `<rank>.end`: kEndSize bytes allocated at start ("running"); how the process ended is
//    written into it in place (pwrite, no allocation: it works on a full disk and in a signal
//    handler).
// A finalize that completes the archive removes the directory.
#pragma once

#include "record/rma_io_defs.h"
#include "record/unify.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace htrace::record::snapshot {

constexpr const char* kDirName = "salvage";
constexpr std::size_t kEndSize = 256;
constexpr const char* kRunning = "running";
constexpr const char* kFinished = "MPI_Finalize"; ///< reached MPI_Finalize (archive incomplete)

// ---- tracer side ----
/// After MPI_Init's clock synchronization: creates the directory, this rank's end file and its
/// first definition snapshot. Never fails the run (a failure is logged at debug level).
void write_initial();
/// Rewrites this rank's definitions if they changed. Caller holds state().mutex.
void refresh_locked(State& s);
/// The same from a thread that holds a location's write mutex (the buffer-flush path): skipped
/// when the registry is busy (the next flush or the end of the run retries).
void refresh_from_flush();
/// Records how this process ended ("MPI_Abort", "SIGSEGV", "write failure: ...", ...). First
/// cause wins, except that kFinished never overwrites a failure. Async-signal-safe.
void mark_end(const char* cause);
/// After a complete archive was written: this rank's files go.
void remove_files(const State& s);
/// Rank 0, after a collective every rank entered after remove_files().
void remove_directory(const State& s);

// ---- salvage side ----
struct RankSnapshot {
  RankDefs defs;
  int world_size = 0;
  std::int64_t start_realtime_ns = 0; ///< CLOCK_REALTIME at start_global_ns
  std::int64_t start_global_ns = 0;   ///< the same instant on the trace's (global) clock
  std::uint64_t event_chunk_size = 0; ///< OTF2 chunk size of the event files (reading needs it)
  std::vector<std::pair<std::string, std::string>> archive_properties;
  RmaIoPart rma_io; ///< windows, groups, files and handles (communicators: the rank's local ids)
};
std::string encode(const RankSnapshot& snap);
/// False (and why) on a damaged or foreign file.
bool decode(const std::string& bytes, RankSnapshot& snap, std::string& error);

} // namespace htrace::record::snapshot
