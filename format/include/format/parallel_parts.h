// Work over thousands of per-location files, split into parts that run on threads of their own.
// Opening and reading a small file is system calls and the first touch of fresh memory, a fixed
// cost per location; the cores a process may run on share it.
#ifndef HTRACE_FORMAT_PARALLEL_PARTS_H
#define HTRACE_FORMAT_PARALLEL_PARTS_H

#include <cstddef>
#include <functional>

namespace htrace::format {

// The cores this process may run on (its affinity: a batch job's share of the node).
size_t cores_to_run_on();

// For per-location files: enough threads to overlap the system calls of a parallel file
// system's round trips, and no thread for fewer files than the cost of starting one.
constexpr size_t kMaxFileParts = 8, kMinFilesPerPart = 512;

// How many parts `items` are split into: one per core the process may run on, at most
// `max_parts`, and none of fewer than `min_items` items (so at least one).
size_t parts_for(size_t items, size_t min_items = kMinFilesPerPart,
                 size_t max_parts = kMaxFileParts);

// Calls `work(part, begin, end)` for `parts` contiguous ranges of [0, items) in order, part 0 on
// the calling thread and each other on a thread of its own (on the calling thread where no thread
// can be started). Returns when every part is done, rethrowing the first exception of the lowest
// part that threw: the one a single thread going through the items in order would have met.
void run_in_parts(size_t items, size_t parts,
                  const std::function<void(size_t part, size_t begin, size_t end)>& work);

} // namespace htrace::format
#endif
