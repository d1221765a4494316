#include "correct/mpi_rank_group.h"

#include "mpi_wait.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace htrace::correct {

int wait_all(int count, MPI_Request* requests) {
  constexpr std::chrono::microseconds kLongestPause{200};
  std::chrono::microseconds pause{1};
  for (;;) {
    int done = 0;
    const int rc = MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (done || rc != MPI_SUCCESS) return rc;
    std::this_thread::sleep_for(pause);
    pause = std::min(2 * pause, kLongestPause);
  }
}

MpiRankGroup::MpiRankGroup(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
}

void MpiRankGroup::allreduce_in_place(void* values, size_t count, MPI_Datatype type, MPI_Op op) {
  MPI_Request r;
  MPI_Iallreduce(MPI_IN_PLACE, values, static_cast<int>(count), type, op, comm_, &r);
  wait(r);
}

void MpiRankGroup::allreduce_sum(uint64_t* values, size_t count) {
  allreduce_in_place(values, count, MPI_UINT64_T, MPI_SUM);
}

void MpiRankGroup::allreduce_min(int64_t* values, size_t count) {
  allreduce_in_place(values, count, MPI_INT64_T, MPI_MIN);
}

void MpiRankGroup::allreduce_max(int64_t* values, size_t count) {
  allreduce_in_place(values, count, MPI_INT64_T, MPI_MAX);
}

void MpiRankGroup::allreduce_sum_double(double* values, size_t count) {
  allreduce_in_place(values, count, MPI_DOUBLE, MPI_SUM);
}

void MpiRankGroup::barrier() {
  MPI_Request r;
  MPI_Ibarrier(comm_, &r);
  wait(r);
}

void MpiRankGroup::broadcast(void* data, size_t bytes, int root) {
  MPI_Request r;
  MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_, &r);
  wait(r);
}

std::vector<int64_t> MpiRankGroup::allgather(const int64_t* mine, size_t count) {
  const int n = static_cast<int>(count);
  std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
  MPI_Request request;
  MPI_Iallgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_, &request);
  wait(request);
  int total = 0;
  for (int r = 0; r < size_; ++r)
    displs[static_cast<size_t>(r)] = total, total += counts[static_cast<size_t>(r)];
  std::vector<int64_t> all(static_cast<size_t>(total));
  MPI_Iallgatherv(mine, n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T,
                  comm_, &request);
  wait(request);
  return all;
}

void MpiRankGroup::alltoall(const WordSpan* out, EventArray<uint64_t>& in) {
  std::vector<int> send_counts(static_cast<size_t>(size_)), recv_counts(send_counts.size());
  for (int r = 0; r < size_; ++r)
    send_counts[static_cast<size_t>(r)] = static_cast<int>(out[r].size);
  MPI_Request counts;
  MPI_Ialltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_, &counts);
  wait(counts);
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
  wait_all(static_cast<int>(requests.size()), requests.data());
}

} // namespace htrace::correct
