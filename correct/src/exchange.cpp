#include "correct/exchange.h"

#include <climits>
#include <stdexcept>

namespace htrace::correct {

Exchange::Exchange(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  out_.resize(static_cast<size_t>(size_));
}

void Exchange::post(int rank, const P2PStream& stream, uint64_t sequence, int64_t value) {
  Outbox& o = out_[static_cast<size_t>(rank)];
  if (o.run == kNoRun || o.stream != &stream || sequence != o.next_sequence) {
    o.run = o.words.size();
    o.words.insert(o.words.end(),
                   {kP2PRun, stream.src << 32 | stream.dst, stream.comm_tag, sequence});
    o.stream = &stream;
  }
  o.words.push_back(static_cast<uint64_t>(value));
  o.words[o.run] += 2; // one more value: the count sits above the tag bit
  o.next_sequence = sequence + 1;
  posted_++;
}

void Exchange::post(int rank, const CollectiveValue& v) {
  Outbox& o = out_[static_cast<size_t>(rank)];
  o.words.insert(o.words.end(), {kCollective, uint64_t(v.comm) << 32 | v.process, v.sequence,
                                 static_cast<uint64_t>(v.value), static_cast<uint64_t>(v.input)});
  o.run = kNoRun;
  posted_++;
}

void Exchange::reserve(int rank, size_t values, size_t runs) {
  std::vector<uint64_t>& w = out_[static_cast<size_t>(rank)].words;
  w.reserve(w.size() + values + runs * kRunHeader);
}

uint64_t Exchange::run() {
  in_.clear();
  // The values posted on all ranks, and how many ranks have more words for one peer than an
  // MPI count holds: then every rank throws, none waits in the exchange.
  uint64_t totals[2] = {posted_, 0};
  posted_ = 0;
  if (size_ == 1) return totals[0];
  for (const Outbox& o : out_)
    if (o.words.size() > static_cast<size_t>(INT_MAX)) totals[1] = 1;
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_UINT64_T, MPI_SUM, comm_);
  if (totals[1] > 0)
    fail_together(comm_, "more than 2^31 words of values for one correction rank", 0,
                  ErrorKind::Internal);
  const uint64_t moved = totals[0];
  if (moved == 0) return 0;
  // Counts first, then every peer's words straight from its outbox into one receive buffer.
  std::vector<int> send_counts(size_), recv_counts(size_);
  for (int r = 0; r < size_; ++r)
    send_counts[r] = static_cast<int>(out_[static_cast<size_t>(r)].words.size());
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
  size_t total = 0;
  for (int c : recv_counts)
    total += static_cast<size_t>(c);
  in_.resize(total);
  std::vector<MPI_Request> requests;
  size_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    if (recv_counts[r] > 0) {
      requests.emplace_back();
      MPI_Irecv(in_.data() + offset, recv_counts[r], MPI_UINT64_T, r, 0, comm_, &requests.back());
    }
    offset += static_cast<size_t>(recv_counts[r]);
  }
  for (int r = 0; r < size_; ++r)
    if (send_counts[r] > 0) {
      requests.emplace_back();
      MPI_Isend(out_[static_cast<size_t>(r)].words.data(), send_counts[r], MPI_UINT64_T, r, 0,
                comm_, &requests.back());
    }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (Outbox& o : out_)
    o.words.clear(), o.run = kNoRun, o.stream = nullptr;
  return moved;
}

namespace {
bool g_unwinding_together = false;
} // namespace

bool unwinding_together() {
  return g_unwinding_together;
}

void fail_together(MPI_Comm comm, std::string msg, int priority, ErrorKind kind) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (size > 1) {
    int mine = msg.empty() ? 2 * size : priority * size + rank, first = mine;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    first %= size;
    int head[2] = {static_cast<int>(msg.size()), static_cast<int>(kind)};
    MPI_Bcast(head, 2, MPI_INT, first, comm);
    msg.resize(static_cast<size_t>(head[0]));
    MPI_Bcast(msg.data(), head[0], MPI_CHAR, first, comm);
    kind = static_cast<ErrorKind>(head[1]);
  }
  g_unwinding_together = true;
  throw Error(kind, msg, /*agreed=*/true);
}

void check_together(MPI_Comm comm, const std::string& msg, int priority, ErrorKind kind) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  int bad = msg.empty() ? 0 : 1, any = bad;
  if (size > 1) MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any) fail_together(comm, msg, priority, kind);
}

std::vector<int64_t> allgather_words(MPI_Comm comm, const int64_t* mine, size_t count) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(count);
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r)
    displs[static_cast<size_t>(r)] = total, total += counts[static_cast<size_t>(r)];
  std::vector<int64_t> all(static_cast<size_t>(total));
  MPI_Allgatherv(mine, n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, comm);
  return all;
}

} // namespace htrace::correct
