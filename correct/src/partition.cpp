#include "correct/partition.h"

#include <algorithm>

namespace htrace::correct {

// By the middle, not by the start: assigning a process to the share where its first event falls
// would give rank 0 three of four near-equal processes (as in an HPCC trace) at two ranks whenever
// the first two are a little smaller than the last two, and the correction would not scale.
std::vector<int> assign_processes(const std::vector<uint64_t>& events, int ranks) {
  using Wide = unsigned __int128; // 2 * events * ranks exceeds 64 bits on huge archives
  Wide total = 0;
  for (uint64_t e : events)
    total += Wide(e) + 1;
  std::vector<int> owner(events.size());
  Wide before = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Wide weight = Wide(events[i]) + 1;
    const Wide twice_middle = 2 * before + weight;
    owner[i] = static_cast<int>(std::min<Wide>(ranks - 1, twice_middle * ranks / (2 * total)));
    before += weight;
  }
  return owner;
}

} // namespace htrace::correct
