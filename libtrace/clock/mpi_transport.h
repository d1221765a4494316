// Transport over PMPI on a communicator private to the tracer: the application never sees this
// traffic (no profiled calls, no user communicator, so no wildcard receive can steal it).
#pragma once

#include "clock/transport.h"

#include <mpi.h>

namespace htrace::clock {

class MpiTransport final : public Transport {
public:
  /// Uses `comm` (not owned unless `owned`, then freed on destruction).
  explicit MpiTransport(MPI_Comm comm, bool owned = false);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int peer, const void* data, std::size_t bytes) override;
  void recv(int peer, void* data, std::size_t bytes) override;
  void recv_hot(int peer, void* data, std::size_t bytes) override;
  std::unique_ptr<Transport> split(int color, int key) override;
  /// The node communicator is created once per transport; the result borrows it (it must not
  /// outlive this transport).
  std::unique_ptr<Transport> split_node() override;
  void broadcast(void* data, std::size_t bytes, int root) override;
  void barrier() override;

  MPI_Comm comm() const { return comm_; }

private:
  MPI_Comm comm_;
  bool owned_;
  MPI_Comm node_comm_ = MPI_COMM_NULL; ///< made by the first split_node(), freed with this
  int rank_ = 0;
  int size_ = 1;
};

} // namespace htrace::clock
