#include "clock/transport.h"

#include <algorithm>

namespace htrace::clock {

namespace {
/// Binomial tree over ranks relative to the root: ceil(log2 n) rounds, the root sending to at most
/// that many ranks instead of to all of them.
void binomial_broadcast(Transport& t, void* data, std::size_t bytes, int root) {
  const int n = t.size();
  const int me = (t.rank() - root + n) % n;
  int top = 1; // the lowest power of two above me (1 for the root)
  while (top <= me)
    top *= 2;
  if (me > 0) t.recv((me - top / 2 + root) % n, data, bytes);
  int step = top;
  while (me + step < n)
    step *= 2;
  for (step /= 2; step >= top; step /= 2)
    if (me + step < n) t.send((me + step + root) % n, data, bytes);
}
} // namespace

void Transport::broadcast(void* data, std::size_t bytes, int root) {
  binomial_broadcast(*this, data, bytes, root);
}

std::vector<std::int64_t> Transport::allgather(std::int64_t value) {
  // Gathered up a binomial tree (in the round of `step`, rank r + step sends r the values of its
  // subtree, ranks r + step .. r + 2 step - 1), then broadcast: ceil(log2 n) rounds each way, no
  // rank receiving from more than that many ranks.
  const int n = size(), me = rank();
  std::vector<std::int64_t> all(static_cast<std::size_t>(n));
  all[static_cast<std::size_t>(me)] = value;
  for (int step = 1; step < n; step *= 2) {
    if (me % (2 * step) == step) {
      const int count = std::min(step, n - me);
      send(me - step, &all[static_cast<std::size_t>(me)], sizeof(std::int64_t) * count);
      break;
    }
    if (me + step < n) {
      const int count = std::min(step, n - me - step);
      recv(me + step, &all[static_cast<std::size_t>(me + step)], sizeof(std::int64_t) * count);
    }
  }
  // The tree's own broadcast, not an override's: an MPI library may pipeline P values along a
  // chain of all ranks (libnbc does above 64 KiB), P hops before the last rank has them.
  binomial_broadcast(*this, all.data(), all.size() * sizeof(std::int64_t), 0);
  return all;
}

void Transport::barrier() {
  allgather(0);
}

std::int64_t Transport::allreduce_min(std::int64_t value) {
  const auto all = allgather(value);
  return *std::min_element(all.begin(), all.end());
}

std::int64_t Transport::allreduce_max(std::int64_t value) {
  const auto all = allgather(value);
  return *std::max_element(all.begin(), all.end());
}

SubsetTransport::SubsetTransport(Transport& parent, std::vector<int> members,
                                 std::vector<int> node_of)
    : parent_(parent), members_(std::move(members)), node_of_(std::move(node_of)) {
  const auto it = std::find(members_.begin(), members_.end(), parent_.rank());
  rank_ = it == members_.end() ? -1 : static_cast<int>(it - members_.begin());
}

void SubsetTransport::send(int peer, const void* data, std::size_t bytes) {
  parent_.send(members_[static_cast<std::size_t>(peer)], data, bytes);
}

void SubsetTransport::recv(int peer, void* data, std::size_t bytes) {
  parent_.recv(members_[static_cast<std::size_t>(peer)], data, bytes);
}

void SubsetTransport::recv_hot(int peer, void* data, std::size_t bytes) {
  parent_.recv_hot(members_[static_cast<std::size_t>(peer)], data, bytes);
}

std::vector<int> Transport::split_order(int color, int key) {
  const auto colors = allgather(color);
  const auto keys = allgather(key);
  std::vector<int> order;
  if (color < 0) return order;
  for (int i = 0; i < size(); ++i)
    if (colors[static_cast<std::size_t>(i)] == color) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return keys[static_cast<std::size_t>(a)] < keys[static_cast<std::size_t>(b)];
  });
  return order;
}

std::unique_ptr<Transport> SubsetTransport::split(int color, int key) {
  const std::vector<int> order = split_order(color, key);
  if (color < 0) return nullptr;
  std::vector<int> members, nodes;
  for (int i : order) {
    members.push_back(members_[static_cast<std::size_t>(i)]);
    nodes.push_back(node_of_[static_cast<std::size_t>(i)]);
  }
  return std::make_unique<SubsetTransport>(parent_, members, nodes);
}

std::unique_ptr<Transport> SubsetTransport::split_node() {
  return split(node_of_[static_cast<std::size_t>(rank_)], rank_);
}

} // namespace htrace::clock
