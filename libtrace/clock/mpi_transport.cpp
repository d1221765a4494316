#include "clock/mpi_transport.h"

namespace htrace::clock {
namespace {
constexpr int kTag = 0x4854; // any tag works: the communicator is private to the clock code
}

MpiTransport::MpiTransport(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size_);
}

MpiTransport::~MpiTransport() {
  if (owned_ && comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

void MpiTransport::send(int peer, const void* data, std::size_t bytes) {
  PMPI_Send(data, static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_);
}

void MpiTransport::recv(int peer, void* data, std::size_t bytes) {
  PMPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, peer, kTag, comm_, MPI_STATUS_IGNORE);
}

std::unique_ptr<Transport> MpiTransport::split(int color, int key) {
  MPI_Comm sub = MPI_COMM_NULL;
  PMPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub);
  if (sub == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiTransport>(sub, true);
}

std::unique_ptr<Transport> MpiTransport::split_node() {
  MPI_Comm sub = MPI_COMM_NULL;
  PMPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &sub);
  return std::make_unique<MpiTransport>(sub, true);
}

void MpiTransport::broadcast(void* data, std::size_t bytes, int root) {
  PMPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_);
}

std::vector<std::int64_t> MpiTransport::allgather(std::int64_t value) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(size_));
  PMPI_Allgather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm_);
  return all;
}

void MpiTransport::barrier() { PMPI_Barrier(comm_); }

} // namespace htrace::clock
