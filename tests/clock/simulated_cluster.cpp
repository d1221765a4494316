#include "simulated_cluster.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace htrace::clock::testing {
namespace {

class SimulatedTransport final : public Transport {
public:
  SimulatedTransport(SimulatedCluster& cluster, std::shared_ptr<SimulatedCluster::Group> group,
                     int rank)
      : cluster_(cluster), group_(std::move(group)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(group_->members.size()); }
  void send(int peer, const void* data, std::size_t bytes) override {
    cluster_.post(group_->id, rank_, peer, data, bytes);
  }
  void recv(int peer, void* data, std::size_t bytes) override {
    cluster_.take(group_->id, peer, rank_, data, bytes);
  }
  std::unique_ptr<Transport> split(int color, int key) override {
    const std::vector<int> order = split_order(color, key);
    const int sequence = ++splits_;
    if (color < 0) return nullptr;
    std::vector<int> members;
    int me = -1;
    for (int i : order) {
      if (i == rank_) me = static_cast<int>(members.size());
      members.push_back(group_->members[static_cast<std::size_t>(i)]);
    }
    auto group = cluster_.get_group(group_->id, sequence, color, members);
    return std::make_unique<SimulatedTransport>(cluster_, group, me);
  }
  std::unique_ptr<Transport> split_node() override {
    return split(cluster_.rank_info(group_->members[static_cast<std::size_t>(rank_)]).node, rank_);
  }

private:
  SimulatedCluster& cluster_;
  std::shared_ptr<SimulatedCluster::Group> group_;
  int rank_;
  int splits_ = 0;
};

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

SimulatedCluster::SimulatedCluster(std::vector<SimulatedRank> ranks) : ranks_(std::move(ranks)) {
  std::vector<int> all(ranks_.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<int>(i);
  world_ = std::make_shared<Group>(Group{0, all});
  groups_[0] = world_;
}

std::int64_t SimulatedCluster::true_now() const {
  return steady_ns();
}

std::int64_t SimulatedCluster::local_at(int rank, std::int64_t t) const {
  const auto& r = rank_info(rank);
  return r.offset_ns + t + std::llround(r.drift * static_cast<double>(t));
}

std::int64_t SimulatedCluster::true_at(int rank, std::int64_t local) const {
  const auto& r = rank_info(rank);
  return std::llround(static_cast<double>(local - r.offset_ns) / (1.0 + r.drift));
}

std::int64_t SimulatedCluster::local_now(int rank) const {
  return local_at(rank, true_now());
}

void SimulatedCluster::run(const std::function<void(Transport&)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < size(); ++r)
    threads.emplace_back([this, r, &body] {
      SimulatedTransport t(*this, world_group(), r);
      body(t);
    });
  for (auto& th : threads)
    th.join();
}

std::shared_ptr<SimulatedCluster::Group>
SimulatedCluster::get_group(int parent, int sequence, int color, const std::vector<int>& members) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto key = std::make_tuple(parent, sequence, color);
  auto it = group_ids_.find(key);
  if (it != group_ids_.end()) return groups_.at(it->second);
  const int id = static_cast<int>(groups_.size());
  group_ids_[key] = id;
  groups_[id] = std::make_shared<Group>(Group{id, members});
  return groups_[id];
}

void SimulatedCluster::delay_messages(int from, int to, int count, std::int64_t delay_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  delays_[{from, to}] = Delay{count, delay_ns};
}

void SimulatedCluster::post(int group, int src, int dst, const void* data, std::size_t bytes) {
  std::vector<std::uint8_t> message(bytes);
  if (bytes) std::memcpy(message.data(), data, bytes);
  std::int64_t delay_ns = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto& members = groups_.at(group)->members;
    auto it = delays_.find(
        {members[static_cast<std::size_t>(src)], members[static_cast<std::size_t>(dst)]});
    if (it != delays_.end() && it->second.count > 0) {
      --it->second.count;
      delay_ns = it->second.ns;
    }
  }
  if (delay_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(delay_ns));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    mail_[std::make_tuple(group, src, dst)].push_back(std::move(message));
  }
  arrived_.notify_all();
}

void SimulatedCluster::take(int group, int src, int dst, void* data, std::size_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto& box = mail_[std::make_tuple(group, src, dst)];
  arrived_.wait(lock, [&] { return !box.empty(); });
  if (box.front().size() != bytes)
    throw std::runtime_error("simulated transport: message size mismatch");
  if (bytes) std::memcpy(data, box.front().data(), bytes);
  box.pop_front();
}

} // namespace htrace::clock::testing
