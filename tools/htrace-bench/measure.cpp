#include "measure.h"

#include "clock/base_clock.h"
#include "common/median.h"
#include "harmonize/global_wait.h"
#include "htrace/mpix_harmonize.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace htrace::bench {
namespace {

constexpr int kBatch = 16; // measurements between two validity/budget agreements (Listing 1)

class Buffers {
public:
  Buffers(std::size_t bytes, int ranks)
      : send_(std::max<std::size_t>(bytes, 1) * ranks, 1), recv_(send_.size(), 0), bytes_(bytes) {}

  void run(Op op, MPI_Comm comm) {
    const int count = static_cast<int>(bytes_);
    switch (op) {
    case Op::Barrier:
      MPI_Barrier(comm);
      break;
    case Op::Bcast:
      MPI_Bcast(send_.data(), count, MPI_BYTE, 0, comm);
      break;
    case Op::Reduce:
      MPI_Reduce(send_.data(), recv_.data(), count, MPI_BYTE, MPI_BAND, 0, comm);
      break;
    case Op::Allreduce:
      MPI_Allreduce(send_.data(), recv_.data(), count, MPI_BYTE, MPI_BAND, comm);
      break;
    case Op::Allgather:
      MPI_Allgather(send_.data(), count, MPI_BYTE, recv_.data(), count, MPI_BYTE, comm);
      break;
    case Op::Alltoall:
      MPI_Alltoall(send_.data(), count, MPI_BYTE, recv_.data(), count, MPI_BYTE, comm);
      break;
    }
  }

private:
  std::vector<unsigned char> send_, recv_;
  std::size_t bytes_;
};

std::int64_t gnow(const Context& c) {
  return c.map.to_global(clock::now());
}

// Waits for `start` on the global clock; false if it had already passed (a late rank).
bool wait_for(const Context& c, std::int64_t start) {
  return harmonize::wait_until_global(c.map, start, c.spin_ns);
}

// Window length for --sync window when not given: twice the slowest rank's median local duration
// of the operation in a short barrier-synchronized pilot, plus the broadcast latency.
std::int64_t pilot_window(const Context& c, Buffers& buffers, Op op) {
  std::vector<std::int64_t> d;
  for (int i = 0; i < 9; ++i) {
    MPI_Barrier(c.comm);
    const std::int64_t t0 = clock::now();
    buffers.run(op, c.comm);
    d.push_back(clock::now() - t0);
  }
  const std::int64_t typical = median(std::move(d));
  std::int64_t slowest = 0;
  MPI_Allreduce(&typical, &slowest, 1, MPI_INT64_T, MPI_MAX, c.comm);
  return 2 * slowest + c.bcast_latency_ns;
}

} // namespace

std::int64_t estimate_bcast_latency(MPI_Comm comm) {
  std::vector<std::int64_t> samples;
  for (int i = 0; i < 21; ++i) {
    std::int64_t value = 0, sink = 0;
    const std::int64_t t0 = clock::now();
    MPI_Bcast(&value, 1, MPI_INT64_T, 0, comm);
    MPI_Reduce(&value, &sink, 1, MPI_INT64_T, MPI_MAX, 0, comm);
    samples.push_back(clock::now() - t0);
  }
  std::int64_t latency = median(std::move(samples));
  MPI_Bcast(&latency, 1, MPI_INT64_T, 0, comm);
  return latency;
}

std::vector<Measurement> run_experiment(const Context& c, const BenchConfig& config, Op op,
                                        std::size_t bytes) {
  Buffers buffers(bytes, c.size);
  const std::int64_t slack = std::max<std::int64_t>(
      static_cast<std::int64_t>(config.slack_factor * c.bcast_latency_ns), 1000);
  std::int64_t window = static_cast<std::int64_t>(config.window_us * 1000.0);
  if (config.sync == SyncMethod::Window && window <= 0) window = pilot_window(c, buffers, op);

  std::vector<std::int64_t> starts, ends;
  std::vector<int> invalid; // agreed over all ranks (max)
  const std::int64_t budget_end_local =
      clock::now() + static_cast<std::int64_t>(config.budget_s * 1e9);
  buffers.run(op, c.comm); // warm-up: connections and buffers
  const int batch = config.sync == SyncMethod::RoundTime ? 1 : kBatch;
  for (bool done = false; !done;) {
    std::vector<int> flags(batch + 1, 0); // [invalid per measurement..., out of time]
    std::int64_t window_origin = 0;
    if (config.sync == SyncMethod::Window) {
      window_origin = gnow(c) + slack;
      MPI_Bcast(&window_origin, 1, MPI_INT64_T, 0, c.comm);
    }
    for (int k = 0; k < batch; ++k) {
      switch (config.sync) {
      case SyncMethod::Barrier:
        MPI_Barrier(c.comm);
        break;
      case SyncMethod::Window:
        flags[k] = !wait_for(c, window_origin + k * window);
        break;
      case SyncMethod::RoundTime: {
        std::int64_t start = c.rank == 0 ? gnow(c) + slack : 0;
        MPI_Bcast(&start, 1, MPI_INT64_T, 0, c.comm);
        flags[k] = !wait_for(c, start);
        break;
      }
      case SyncMethod::Harmonize: {
        int ok = 0;
        MPIX_Harmonize(c.comm, &ok);
        flags[k] = !ok;
        break;
      }
      }
      starts.push_back(gnow(c));
      buffers.run(op, c.comm);
      ends.push_back(gnow(c));
    }
    flags[batch] = clock::now() >= budget_end_local ||
                   static_cast<long>(starts.size()) + batch > config.max_reps;
    MPI_Allreduce(MPI_IN_PLACE, flags.data(), batch + 1, MPI_INT, MPI_MAX, c.comm);
    invalid.insert(invalid.end(), flags.begin(), flags.begin() + batch);
    done = flags[batch] != 0;
  }

  const std::size_t n = starts.size();
  std::vector<std::int64_t> all_starts(c.rank == 0 ? n * c.size : 0), all_ends(all_starts.size());
  MPI_Gather(starts.data(), static_cast<int>(n), MPI_INT64_T, all_starts.data(),
             static_cast<int>(n), MPI_INT64_T, 0, c.comm);
  MPI_Gather(ends.data(), static_cast<int>(n), MPI_INT64_T, all_ends.data(), static_cast<int>(n),
             MPI_INT64_T, 0, c.comm);
  std::vector<Measurement> result;
  if (c.rank != 0) return result;
  result.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t min_start = all_starts[i], max_start = all_starts[i], max_end = all_ends[i];
    for (int r = 1; r < c.size; ++r) {
      min_start = std::min(min_start, all_starts[r * n + i]);
      max_start = std::max(max_start, all_starts[r * n + i]);
      max_end = std::max(max_end, all_ends[r * n + i]);
    }
    result[i] = {max_end - min_start, max_start - min_start, invalid[i] == 0};
  }
  return result;
}

} // namespace htrace::bench
