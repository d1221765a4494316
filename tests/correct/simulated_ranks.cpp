#include "simulated_ranks.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace htrace::correct::testing {

// One rank's view. Each collective: deposit, meet, read the others' deposits, meet (after which
// the deposits may change again), then write the result into the caller's buffers.
class SimulatedRankGroup final : public RankGroup {
public:
  SimulatedRankGroup(SimulatedRanks& all, int rank) : all_(all), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return all_.size_; }

  void allreduce_sum(uint64_t* values, size_t count) override {
    reduce(values, count, [](uint64_t a, uint64_t b) { return a + b; });
  }
  void allreduce_min(int64_t* values, size_t count) override {
    reduce(values, count, [](int64_t a, int64_t b) { return std::min(a, b); });
  }
  void allreduce_max(int64_t* values, size_t count) override {
    reduce(values, count, [](int64_t a, int64_t b) { return std::max(a, b); });
  }

  void broadcast(void* data, size_t bytes, int root) override {
    std::vector<char> got(bytes);
    rendezvous(data, [&] { std::memcpy(got.data(), deposit<char>(root), bytes); });
    std::memcpy(data, got.data(), bytes);
  }

  std::vector<int64_t> allgather(const int64_t* mine, size_t count) override {
    const std::pair<const int64_t*, size_t> span{mine, count};
    std::vector<int64_t> all;
    rendezvous(&span, [&] {
      for (int r = 0; r < size(); ++r) {
        const auto* s = deposit<std::pair<const int64_t*, size_t>>(r);
        all.insert(all.end(), s->first, s->first + s->second);
      }
    });
    return all;
  }

  void alltoall(const WordSpan* out, EventArray<uint64_t>& in) override {
    rendezvous(out, [&] {
      size_t total = 0;
      for (int r = 0; r < size(); ++r)
        total += deposit<WordSpan>(r)[rank_].size;
      in.resize(total);
      size_t offset = 0;
      for (int r = 0; r < size(); ++r) {
        const WordSpan& s = deposit<WordSpan>(r)[rank_];
        std::copy(s.data, s.data + s.size, in.data() + offset);
        offset += s.size;
      }
    });
  }

private:
  template <class T> const T* deposit(int rank) const {
    return static_cast<const T*>(all_.deposits_[static_cast<size_t>(rank)]);
  }
  template <class Read> void rendezvous(const void* mine, Read&& read) {
    all_.deposits_[static_cast<size_t>(rank_)] = mine;
    all_.meet();
    read();
    all_.meet();
  }
  template <class T, class Op> void reduce(T* values, size_t count, Op op) {
    std::vector<T> result(values, values + count);
    rendezvous(values, [&] {
      for (int r = 0; r < size(); ++r)
        if (r != rank_)
          for (size_t i = 0; i < count; ++i)
            result[i] = op(result[i], deposit<T>(r)[i]);
    });
    std::copy(result.begin(), result.end(), values);
  }

  SimulatedRanks& all_;
  const int rank_;
};

SimulatedRanks::SimulatedRanks(int size) : size_(size), deposits_(static_cast<size_t>(size)) {}

void SimulatedRanks::meet() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (left_ > 0) throw RanksAbandoned();
  const uint64_t meeting = meetings_;
  if (++waiting_ == size_) {
    waiting_ = 0, ++meetings_;
    met_.notify_all();
    return;
  }
  met_.wait(lock, [&] { return meetings_ != meeting || left_ > 0; });
  if (meetings_ == meeting) throw RanksAbandoned();
}

void SimulatedRanks::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++left_;
  met_.notify_all();
}

std::vector<std::exception_ptr> SimulatedRanks::run(const std::function<void(RankGroup&)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size_));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_ = left_ = 0;
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < size_; ++r)
    threads.emplace_back([this, r, &body, &errors] {
      SimulatedRankGroup group(*this, r);
      try {
        body(group);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
      leave();
    });
  for (std::thread& t : threads)
    t.join();
  return errors;
}

} // namespace htrace::correct::testing
