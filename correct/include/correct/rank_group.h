// The correction ranks as the replay sees them: the few collective operations it needs from the
// others. The engine runs them over MPI (mpi_rank_group.h); unit tests run the replay on simulated
// ranks inside one process.
#ifndef HTRACE_CORRECT_RANK_GROUP_H
#define HTRACE_CORRECT_RANK_GROUP_H

#include "correct/event_array.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace htrace::correct {

// Words one rank sends to one other rank.
struct WordSpan {
  const uint64_t* data = nullptr;
  size_t size = 0;
};

// Every operation is collective: every rank of the group calls it, in the same order.
class RankGroup {
public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Element-wise over the `count` values of every rank, in place.
  virtual void allreduce_sum(uint64_t* values, size_t count) = 0;
  virtual void allreduce_min(int64_t* values, size_t count) = 0;
  virtual void allreduce_max(int64_t* values, size_t count) = 0;
  // `bytes` bytes at `data` of rank `root` into `data` on every rank (the same `bytes` everywhere).
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // Every rank's words, concatenated in rank order, on every rank.
  virtual std::vector<int64_t> allgather(const int64_t* mine, size_t count) = 0;
  // out[r] (size() spans, each below 2^31 words) goes to rank r; `in` becomes the words every
  // rank sent to this one, concatenated in rank order.
  virtual void alltoall(const WordSpan* out, EventArray<uint64_t>& in) = 0;
};

} // namespace htrace::correct
#endif
