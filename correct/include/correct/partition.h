// Which correction rank reads, replays and writes which traced process.
#ifndef HTRACE_CORRECT_PARTITION_H
#define HTRACE_CORRECT_PARTITION_H

#include <cstdint>
#include <vector>

namespace htrace::correct {

// Contiguous blocks of processes with about equal event counts per rank: process i goes to the
// rank whose equal share of all events holds the middle of process i's events (an empty process
// weighs one event). Returns process index -> rank in [0, ranks).
std::vector<int> assign_processes(const std::vector<uint64_t>& events, int ranks);

} // namespace htrace::correct
#endif
