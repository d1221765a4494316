// A transport that counts what passes through it into a TrafficCount, and hands the same count
// to the groups split from it: wrapped around the tracer's world transport, it counts every
// message and collective of the clock synchronization whatever algorithm runs.
#pragma once

#include "clock/transport.h"
#include "common/traffic.h"

#include <memory>

namespace htrace::clock {

class CountingTransport final : public Transport {
public:
  CountingTransport(Transport& inner, TrafficCount& count) : inner_(inner), count_(count) {}
  CountingTransport(const CountingTransport&) = delete;
  CountingTransport& operator=(const CountingTransport&) = delete;
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void send(int peer, const void* data, std::size_t bytes) override {
    count_.sent(this, peer, bytes);
    inner_.send(peer, data, bytes);
  }
  void recv(int peer, void* data, std::size_t bytes) override {
    inner_.recv(peer, data, bytes);
    count_.received(this, peer, bytes);
  }
  void recv_hot(int peer, void* data, std::size_t bytes) override {
    inner_.recv_hot(peer, data, bytes);
    count_.received(this, peer, bytes);
  }
  std::unique_ptr<Transport> split(int color, int key) override {
    count_.collective();
    return wrap(inner_.split(color, key));
  }
  std::unique_ptr<Transport> split_node() override {
    count_.collective();
    return wrap(inner_.split_node());
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    count_.collective();
    inner_.broadcast(data, bytes, root);
  }
  std::vector<std::int64_t> allgather(std::int64_t value) override {
    count_.collective();
    return inner_.allgather(value);
  }
  void barrier() override {
    count_.collective();
    inner_.barrier();
  }

  /// Counts `group` (never null), which it owns: a group split from a counted one.
  CountingTransport(std::unique_ptr<Transport> group, TrafficCount& count)
      : owned_(std::move(group)), inner_(*owned_), count_(count) {}

private:
  std::unique_ptr<Transport> wrap(std::unique_ptr<Transport> group) {
    if (!group) return nullptr;
    return std::make_unique<CountingTransport>(std::move(group), count_);
  }

  std::unique_ptr<Transport> owned_; // before inner_, which may refer to it
  Transport& inner_;
  TrafficCount& count_;
};

} // namespace htrace::clock
