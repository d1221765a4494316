#include "clock/mpi_transport.h"

#include <algorithm>
#include <chrono>
#include <sched.h>
#include <thread>

namespace htrace::clock {
namespace {
constexpr int kTag = 0x4854; // any tag works: the communicator is private to the clock code
}

MpiTransport::MpiTransport(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size_);
}

MpiTransport::~MpiTransport() {
  if (node_comm_ != MPI_COMM_NULL) PMPI_Comm_free(&node_comm_);
  if (owned_ && comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

void MpiTransport::send(int peer, const void* data, std::size_t bytes) {
  PMPI_Send(data, static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_);
}

namespace {
// Spin for `spin` (a ping-pong partner answers within microseconds), then back off with sleeps:
// ranks that merely wait for their turn (JK, later tree rounds, members waiting for their node
// leader) must not steal the CPU from the pair that is measuring when ranks outnumber cores.
// While spinning, the waiter yields after each poll: where ranks outnumber cores the partner it
// waits for may be queued on this very core, and a plain spin would hold it off for a whole
// time slice (milliseconds). With nothing else runnable sched_yield returns at once.
void wait_for(MPI_Request& request, std::chrono::microseconds spin) {
  int done = 0;
  const auto spin_until = std::chrono::steady_clock::now() + spin;
  while (!done && std::chrono::steady_clock::now() < spin_until) {
    PMPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) sched_yield();
  }
  std::chrono::microseconds nap(10);
  while (!done) {
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(500));
    PMPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
}
void wait_politely(MPI_Request& request) {
  wait_for(request, std::chrono::microseconds(50));
}
// A timed exchange: a sleeping receiver wakes tens of microseconds late, which lands in the
// round trip and widens the offset bound. Spinning is bounded so that a partner that lost its
// core (oversubscribed nodes) gets it back instead of waiting for the spinner's time slice.
constexpr std::chrono::microseconds kHotSpin(2000);
} // namespace

void MpiTransport::recv(int peer, void* data, std::size_t bytes) {
  MPI_Request request;
  PMPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_, &request);
  wait_politely(request);
}

void MpiTransport::recv_hot(int peer, void* data, std::size_t bytes) {
  MPI_Request request;
  PMPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_, &request);
  wait_for(request, kHotSpin);
}

std::unique_ptr<Transport> MpiTransport::split(int color, int key) {
  MPI_Comm sub = MPI_COMM_NULL;
  PMPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub);
  if (sub == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiTransport>(sub, true);
}

std::unique_ptr<Transport> MpiTransport::split_node() {
  // Communicator creation is the slowest step of a sync on a busy machine; the node split is
  // needed several times (base clock, H2HCA, residuals), so it is made once and lent out.
  if (node_comm_ == MPI_COMM_NULL)
    PMPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm_);
  return std::make_unique<MpiTransport>(node_comm_, false);
}

void MpiTransport::broadcast(void* data, std::size_t bytes, int root) {
  MPI_Request request;
  PMPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_, &request);
  wait_politely(request);
}

void MpiTransport::barrier() {
  MPI_Request request;
  PMPI_Ibarrier(comm_, &request);
  wait_politely(request);
}

} // namespace htrace::clock
