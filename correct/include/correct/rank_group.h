// The correction ranks as the engine sees them: the few collective operations it needs from the
// others. Over MPI (mpi_rank_group.h), or one rank without MPI (SerialRankGroup below: a serial
// htrace-correct never initializes MPI); unit tests run the replay on simulated ranks inside one
// process.
#ifndef HTRACE_CORRECT_RANK_GROUP_H
#define HTRACE_CORRECT_RANK_GROUP_H

#include "correct/event_array.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
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

  // Returns once every rank has called it.
  virtual void barrier() {
    int64_t none = 0;
    allreduce_max(&none, 1);
  }
  // Element-wise sums, the same on every rank (added in rank order here).
  virtual void allreduce_sum_double(double* values, size_t count) {
    std::vector<int64_t> mine(count);
    std::memcpy(mine.data(), values, count * sizeof(double));
    const std::vector<int64_t> all = allgather(mine.data(), count);
    for (size_t i = 0; i < count; ++i) {
      double sum = 0;
      for (size_t r = 0; r < all.size() / (count ? count : 1); ++r) {
        double v = 0;
        std::memcpy(&v, &all[r * count + i], sizeof v);
        sum += v;
      }
      values[i] = sum;
    }
  }
};

// The only rank: every collective returns this rank's own values.
class SerialRankGroup final : public RankGroup {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(uint64_t*, size_t) override {}
  void allreduce_min(int64_t*, size_t) override {}
  void allreduce_max(int64_t*, size_t) override {}
  void broadcast(void*, size_t, int) override {}
  std::vector<int64_t> allgather(const int64_t* mine, size_t count) override {
    return std::vector<int64_t>(mine, mine + count);
  }
  void alltoall(const WordSpan* out, EventArray<uint64_t>& in) override {
    in.resize(out[0].size);
    if (out[0].size) std::memcpy(in.data(), out[0].data, out[0].size * sizeof(uint64_t));
  }
  void barrier() override {}
  void allreduce_sum_double(double*, size_t) override {}
};

} // namespace htrace::correct
#endif
