#include "correct/mpi_rank_group.h"

namespace htrace::correct {

MpiRankGroup::MpiRankGroup(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
}

void MpiRankGroup::allreduce_sum(uint64_t* values, size_t count) {
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_UINT64_T, MPI_SUM, comm_);
}

void MpiRankGroup::allreduce_min(int64_t* values, size_t count) {
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_INT64_T, MPI_MIN, comm_);
}

void MpiRankGroup::allreduce_max(int64_t* values, size_t count) {
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_INT64_T, MPI_MAX, comm_);
}

void MpiRankGroup::allreduce_sum_double(double* values, size_t count) {
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_SUM, comm_);
}

void MpiRankGroup::barrier() {
  MPI_Barrier(comm_);
}

void MpiRankGroup::broadcast(void* data, size_t bytes, int root) {
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_);
}

std::vector<int64_t> MpiRankGroup::allgather(const int64_t* mine, size_t count) {
  const int n = static_cast<int>(count);
  std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
  int total = 0;
  for (int r = 0; r < size_; ++r)
    displs[static_cast<size_t>(r)] = total, total += counts[static_cast<size_t>(r)];
  std::vector<int64_t> all(static_cast<size_t>(total));
  MPI_Allgatherv(mine, n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T,
                 comm_);
  return all;
}

void MpiRankGroup::alltoall(const WordSpan* out, EventArray<uint64_t>& in) {
  std::vector<int> send_counts(static_cast<size_t>(size_)), recv_counts(send_counts.size());
  for (int r = 0; r < size_; ++r)
    send_counts[static_cast<size_t>(r)] = static_cast<int>(out[r].size);
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
  size_t total = 0;
  for (int c : recv_counts)
    total += static_cast<size_t>(c);
  in.resize(total);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * send_counts.size());
  size_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    const int c = recv_counts[static_cast<size_t>(r)];
    if (c > 0) {
      requests.emplace_back();
      MPI_Irecv(in.data() + offset, c, MPI_UINT64_T, r, 0, comm_, &requests.back());
    }
    offset += static_cast<size_t>(c);
  }
  for (int r = 0; r < size_; ++r) {
    const int c = send_counts[static_cast<size_t>(r)];
    if (c > 0) {
      requests.emplace_back();
      MPI_Isend(out[r].data, c, MPI_UINT64_T, r, 0, comm_, &requests.back());
    }
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

} // namespace htrace::correct
