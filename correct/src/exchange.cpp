#include "correct/exchange.h"

#include <stdexcept>

namespace htrace::correct {

Exchange::Exchange(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  out_.resize(static_cast<size_t>(size_));
}

std::vector<RemoteValue> Exchange::run(uint64_t& moved) {
  std::vector<RemoteValue> in;
  uint64_t posted = 0;
  for (const auto& o : out_)
    posted += o.size();
  moved = posted;
  if (size_ == 1) return in;
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_UINT64_T, MPI_SUM, comm_);
  if (moved == 0) return in;
  const int n = size_;
  const int bytes = static_cast<int>(sizeof(RemoteValue));
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  std::vector<RemoteValue> send;
  send.reserve(posted);
  for (int r = 0; r < n; ++r) {
    sd[r] = static_cast<int>(send.size()) * bytes;
    send.insert(send.end(), out_[r].begin(), out_[r].end());
    sc[r] = static_cast<int>(out_[r].size()) * bytes;
    out_[r].clear();
  }
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, comm_);
  int total = 0;
  for (int r = 0; r < n; ++r)
    rd[r] = total, total += rc[r];
  in.resize(static_cast<size_t>(total / bytes));
  MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, in.data(), rc.data(), rd.data(),
                MPI_BYTE, comm_);
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
