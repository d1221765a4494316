// A simulated cluster for unit tests of the synchronization algorithms without MPI: every rank is
// a thread, messages go through in-memory mailboxes, and every rank reads its own clock
//   local_r(T) = offset_r + (1 + drift_r) * T      (T: the host's steady clock)
// so the true offset between any two ranks is known exactly at any moment.
#pragma once

#include "clock/transport.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace htrace::clock::testing {

struct SimulatedRank {
  std::int64_t offset_ns = 0;
  double drift = 0.0;
  int node = 0;
};

class SimulatedCluster {
public:
  explicit SimulatedCluster(std::vector<SimulatedRank> ranks);

  int size() const { return static_cast<int>(ranks_.size()); }
  std::int64_t true_now() const;
  std::int64_t local_now(int rank) const;
  /// Local clock of `rank` at true time T.
  std::int64_t local_at(int rank, std::int64_t true_time) const;
  /// True time at which `rank`'s clock reads `local`.
  std::int64_t true_at(int rank, std::int64_t local) const;
  /// Rank 0's clock at the moment `rank`'s clock reads `local`: what a perfect global clock says.
  std::int64_t reference_at(int rank, std::int64_t local) const {
    return local_at(0, true_at(rank, local));
  }

  /// The next `count` messages world rank `from` sends to world rank `to` leave `delay_ns` late,
  /// as if the sender were preempted between reading its clock and sending.
  void delay_messages(int from, int to, int count, std::int64_t delay_ns);

  /// Runs `body(transport)` on one thread per rank and joins them.
  void run(const std::function<void(Transport&)>& body);

  // Mailbox machinery used by the transports.
  struct Group {
    int id;
    std::vector<int> members; // world ranks in group-rank order
  };
  std::shared_ptr<Group> world_group() { return world_; }
  std::shared_ptr<Group> get_group(int parent, int sequence, int color,
                                   const std::vector<int>& members);
  void post(int group, int src, int dst, const void* data, std::size_t bytes);
  void take(int group, int src, int dst, void* data, std::size_t bytes);
  const SimulatedRank& rank_info(int r) const { return ranks_.at(static_cast<std::size_t>(r)); }

private:
  std::vector<SimulatedRank> ranks_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<std::uint8_t>>> mail_;
  std::shared_ptr<Group> world_;
  std::map<int, std::shared_ptr<Group>> groups_;
  std::map<std::tuple<int, int, int>, int> group_ids_;
  struct Delay {
    int count = 0;
    std::int64_t ns = 0;
  };
  std::map<std::pair<int, int>, Delay> delays_; // (from, to) world ranks
};

} // namespace htrace::clock::testing
