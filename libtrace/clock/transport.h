// The message layer the synchronization algorithms talk through. The offset and model math only
// sees this interface, so unit tests run it on a simulated multi-rank transport with clocks of
// known offset and drift; the tracer runs it on PMPI (mpi_transport.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace htrace::clock {

/// A group of ranks (like a communicator). Blocking, ordered point-to-point messages per pair.
class Transport {
public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void send(int peer, const void* data, std::size_t bytes) = 0;
  virtual void recv(int peer, void* data, std::size_t bytes) = 0;
  /// recv() for a timed exchange whose partner answers within microseconds: the receiver keeps
  /// its core (spins) instead of sleeping, whose wake-up latency would widen every bound.
  virtual void recv_hot(int peer, void* data, std::size_t bytes) { recv(peer, data, bytes); }

  /// Sub-groups: ranks with the same color form one group, ordered by (key, rank). A negative
  /// color returns nullptr for the caller. Collective.
  virtual std::unique_ptr<Transport> split(int color, int key) = 0;
  /// The ranks sharing this rank's node (MPI_COMM_TYPE_SHARED). Collective.
  virtual std::unique_ptr<Transport> split_node() = 0;

  /// Collectives with simple default implementations over send/recv; MPI overrides broadcast
  /// and barrier. allgather stays on send/recv everywhere: MPI libraries may run a nonblocking
  /// allgather linearly (Open MPI's libnbc does by default), P - 1 messages per rank and a
  /// connection between every pair of nodes, where this tree takes 2 ceil(log2 P) rounds.
  virtual void broadcast(void* data, std::size_t bytes, int root);
  virtual std::vector<std::int64_t> allgather(std::int64_t value);
  virtual void barrier();

  // Typed helpers.
  void send_i64(int peer, std::int64_t v) { send(peer, &v, sizeof v); }
  std::int64_t recv_i64(int peer) {
    std::int64_t v = 0;
    recv(peer, &v, sizeof v);
    return v;
  }
  std::int64_t recv_hot_i64(int peer) {
    std::int64_t v = 0;
    recv_hot(peer, &v, sizeof v);
    return v;
  }
  std::int64_t allreduce_min(std::int64_t value);
  std::int64_t allreduce_max(std::int64_t value);

protected:
  /// For split(): gathers every rank's color and key and returns the ranks of this transport that
  /// share this rank's color, ordered by (key, rank); empty for a negative color. Collective.
  std::vector<int> split_order(int color, int key);
};

/// Some ranks of a parent transport, talking through the parent: no communicator is created
/// (communicator creation costs more than the whole synchronization on a busy machine). Only
/// members may use it; `node_of` gives each member's node (for split_node()).
class SubsetTransport final : public Transport {
public:
  SubsetTransport(Transport& parent, std::vector<int> members, std::vector<int> node_of);
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  void send(int peer, const void* data, std::size_t bytes) override;
  void recv(int peer, void* data, std::size_t bytes) override;
  void recv_hot(int peer, void* data, std::size_t bytes) override;
  std::unique_ptr<Transport> split(int color, int key) override;
  std::unique_ptr<Transport> split_node() override;

private:
  Transport& parent_;
  std::vector<int> members_; ///< parent ranks in subset-rank order
  std::vector<int> node_of_;
  int rank_ = -1;
};

} // namespace htrace::clock
