#include "clock/transport.h"

#include <algorithm>

namespace htrace::clock {

void Transport::broadcast(void* data, std::size_t bytes, int root) {
  if (rank() == root) {
    for (int r = 0; r < size(); ++r)
      if (r != root) send(r, data, bytes);
  } else {
    recv(root, data, bytes);
  }
}

std::vector<std::int64_t> Transport::allgather(std::int64_t value) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(size()));
  if (rank() == 0) {
    all[0] = value;
    for (int r = 1; r < size(); ++r)
      all[static_cast<std::size_t>(r)] = recv_i64(r);
  } else {
    send_i64(0, value);
  }
  broadcast(all.data(), all.size() * sizeof(std::int64_t), 0);
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

} // namespace htrace::clock
