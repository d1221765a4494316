#include "correct/exchange.h"

#include <atomic>
#include <climits>
#include <exception>
#include <stdexcept>

namespace htrace::correct {

Exchange::Exchange(RankGroup& ranks) : ranks_(ranks), size_(ranks.size()) {
  out_.resize(static_cast<size_t>(size_));
  spans_.resize(out_.size());
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
  // The values posted on all ranks, and how many ranks have more words for one peer than
  // RankGroup::alltoall carries (an MPI count): then every rank throws, none waits in it.
  uint64_t totals[2] = {posted_, 0};
  posted_ = 0;
  if (size_ == 1) return totals[0];
  for (const Outbox& o : out_)
    if (o.words.size() > static_cast<size_t>(INT_MAX)) totals[1] = 1;
  ranks_.allreduce_sum(totals, 2);
  if (totals[1] > 0)
    fail_together(ranks_, "more than 2^31 words of values for one correction rank", 0,
                  ErrorKind::Internal);
  const uint64_t moved = totals[0];
  if (moved == 0) return 0;
  for (size_t r = 0; r < out_.size(); ++r)
    spans_[r] = {out_[r].words.data(), out_[r].words.size()};
  ranks_.alltoall(spans_.data(), in_);
  for (Outbox& o : out_)
    o.words.clear(), o.run = kNoRun, o.stream = nullptr;
  return moved;
}

namespace {
// (Atomic: unit tests run several simulated correction ranks as threads of one process.)
std::atomic<bool> g_unwinding_together{false};
} // namespace

bool unwinding_together() {
  return g_unwinding_together;
}

void fail_together(RankGroup& ranks, std::string msg, int priority, ErrorKind kind) {
  const int size = ranks.size();
  if (size > 1) {
    // The lowest (priority, rank) with a message; 2 * size: none here.
    int64_t first = msg.empty() ? 2 * size : int64_t(priority) * size + ranks.rank();
    ranks.allreduce_min(&first, 1);
    const int root = static_cast<int>(first % size);
    int head[2] = {static_cast<int>(msg.size()), static_cast<int>(kind)};
    ranks.broadcast(head, sizeof head, root);
    msg.resize(static_cast<size_t>(head[0]));
    ranks.broadcast(msg.data(), msg.size(), root);
    kind = static_cast<ErrorKind>(head[1]);
  }
  g_unwinding_together = true;
  throw Error(kind, msg, /*agreed=*/true);
}

void check_together(RankGroup& ranks, const std::string& msg, int priority, ErrorKind kind) {
  int64_t any = msg.empty() ? 0 : 1;
  if (ranks.size() > 1) ranks.allreduce_max(&any, 1);
  if (any) fail_together(ranks, msg, priority, kind);
}

std::string agree(RankGroup& comm, const std::function<std::string()>& fn, ErrorKind kind) {
  std::string result, error;
  try {
    result = fn();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
    kind = error_kind(e, kind);
  }
  check_together(comm, error, 0, kind);
  return result;
}

bool may_clean_up_together() {
  return std::uncaught_exceptions() == 0 || unwinding_together();
}

} // namespace htrace::correct
