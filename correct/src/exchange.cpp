#include "correct/exchange.h"

#include <stdexcept>

namespace htrace::correct {

Exchange::Exchange(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  out_.resize(static_cast<size_t>(size_));
  MPI_Type_contiguous(static_cast<int>(sizeof(RemoteValue)), MPI_BYTE, &value_type_);
  MPI_Type_commit(&value_type_);
}

Exchange::~Exchange() {
  MPI_Type_free(&value_type_);
}

const EventArray<RemoteValue>& Exchange::run(uint64_t& moved) {
  EventArray<RemoteValue>& in = in_;
  in.clear();
  uint64_t posted = 0;
  for (const auto& o : out_)
    posted += o.size();
  moved = posted;
  if (size_ == 1) return in;
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_UINT64_T, MPI_SUM, comm_);
  if (moved == 0) return in;
  // Counts first, then every peer's values straight from its queue into one receive buffer.
  std::vector<int> send_counts(size_), recv_counts(size_);
  for (int r = 0; r < size_; ++r)
    send_counts[r] = static_cast<int>(out_[r].size());
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
  size_t total = 0;
  for (int c : recv_counts)
    total += static_cast<size_t>(c);
  in.resize(total);
  std::vector<MPI_Request> requests;
  size_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    if (recv_counts[r] > 0) {
      requests.emplace_back();
      MPI_Irecv(in.data() + offset, recv_counts[r], value_type_, r, 0, comm_, &requests.back());
    }
    offset += static_cast<size_t>(recv_counts[r]);
  }
  for (int r = 0; r < size_; ++r)
    if (send_counts[r] > 0) {
      requests.emplace_back();
      MPI_Isend(out_[r].data(), send_counts[r], value_type_, r, 0, comm_, &requests.back());
    }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (auto& o : out_)
    o.clear();
  return in;
}

void fail_together(MPI_Comm comm, std::string msg, int priority) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (size > 1) {
    int mine = msg.empty() ? 2 * size : priority * size + rank, first = mine;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    first %= size;
    int len = static_cast<int>(msg.size());
    MPI_Bcast(&len, 1, MPI_INT, first, comm);
    msg.resize(static_cast<size_t>(len));
    MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  }
  throw std::runtime_error(msg);
}

void check_together(MPI_Comm comm, const std::string& msg, int priority) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  int bad = msg.empty() ? 0 : 1, any = bad;
  if (size > 1) MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any) fail_together(comm, msg, priority);
}

} // namespace htrace::correct
