// The input timestamps of one location, in 4 bytes per event instead of 8: each event keeps the
// difference to its predecessor. The few that do not fit (the first event, a time that goes back,
// a gap over 4.29 s) are kept apart with their absolute time. The engine reads them in event
// order; any event can be reached through a checkpoint (absolute time every 1024 events).
#ifndef HTRACE_CORRECT_INPUT_TIMES_H
#define HTRACE_CORRECT_INPUT_TIMES_H

#include "correct/event_array.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace htrace::correct {

class InputTimes {
public:
  void reserve(size_t n) {
    deltas_.reserve(n);
    checkpoints_.reserve(n / kCheckpoint + 1);
  }
  // Inline: the common case (a small step, no checkpoint due) for every event of the read.
  void push_back(int64_t t) {
    const size_t i = deltas_.size();
    const uint64_t d = static_cast<uint64_t>(t) - static_cast<uint64_t>(last_);
    if (i % kCheckpoint != 0 && d < kApart) {
      deltas_.push_back(static_cast<uint32_t>(d));
      last_ = t;
      return;
    }
    push_back_rare(t);
  }

private:
  // A checkpoint, or a time kept apart.
  [[gnu::noinline]] void push_back_rare(int64_t t) {
    const size_t i = deltas_.size();
    if (i % kCheckpoint == 0) checkpoints_.push_back(t);
    // Unsigned: a time that goes back wraps to a large difference and is kept apart too.
    const uint64_t d = static_cast<uint64_t>(t) - static_cast<uint64_t>(last_);
    if (i > 0 && d < kApart) {
      deltas_.push_back(static_cast<uint32_t>(d));
    } else {
      deltas_.push_back(kApart);
      apart_.emplace_back(static_cast<uint32_t>(i), t);
      // (Only here: every time that is not kept apart is within 4.29 s of an in-range one.)
      // (The distance of two int64 values always fits in uint64.)
      const uint64_t gap = i == 0      ? 0
                           : t > last_ ? static_cast<uint64_t>(t) - static_cast<uint64_t>(last_)
                                       : static_cast<uint64_t>(last_) - static_cast<uint64_t>(t);
      if (t < 0 || t > kMaxTime || gap > static_cast<uint64_t>(kMaxGap)) in_range_ = false;
    }
    last_ = t;
  }

public:
  // Bounds that keep the engine's arithmetic (times plus moves, interval lengths times 100) far
  // from overflow. A time beyond them is a damaged trace, not a measurement: 2^62 ns are 146
  // years since the clock's epoch, 2^56 ns 2.3 years between two events of one location.
  static constexpr int64_t kMaxTime = int64_t(1) << 62;
  static constexpr int64_t kMaxGap = int64_t(1) << 56;
  // False if a time pushed so far is negative, above kMaxTime, or further than kMaxGap from its
  // predecessor.
  bool in_range() const { return in_range_; }
  size_t size() const { return deltas_.size(); }
  bool empty() const { return deltas_.empty(); }
  int64_t at(uint32_t i) const { return Reader(*this, i).time(); } // i < size()
  // Every time, decoded (tests and tools; the engine reads them in order instead).
  EventArray<int64_t> decode() const;

  // Reads the times in event order from a given event on. Small and copyable: hot loops take a
  // local copy so its state stays in registers. Valid while the InputTimes does not grow.
  class Reader {
  public:
    Reader() = default;
    // Positioned at event `from` (<= size()).
    Reader(const InputTimes& times, uint32_t from);
    uint32_t index() const { return i_; }
    // The time of event index() (< size()).
    int64_t time() const {
      const uint32_t d = deltas_[i_];
      return d != kApart ? plus(prev_, d) : apart_[next_apart_].second;
    }
    // The time of event index(), then moves to the next event.
    int64_t advance() {
      const uint32_t d = deltas_[i_++];
      prev_ = d != kApart ? plus(prev_, d) : apart_[next_apart_++].second;
      return prev_;
    }
    void next() { advance(); }
    void skip_to(uint32_t i) {
      while (i_ < i)
        advance();
    }

  private:
    // Differences were taken modulo 2^64, and so are the sums.
    static int64_t plus(int64_t t, uint32_t d) {
      return static_cast<int64_t>(static_cast<uint64_t>(t) + d);
    }
    const uint32_t* deltas_ = nullptr;
    const std::pair<uint32_t, int64_t>* apart_ = nullptr;
    uint32_t i_ = 0;
    size_t next_apart_ = 0; // the first kept-apart time at or after event i_
    int64_t prev_ = 0;      // the time of event i_ - 1
  };

private:
  static constexpr uint32_t kApart = UINT32_MAX; // delta marker: time kept in apart_
  static constexpr uint32_t kCheckpoint = 1024;
  EventArray<uint32_t> deltas_;
  std::vector<std::pair<uint32_t, int64_t>> apart_; // (event, time), ascending event
  std::vector<int64_t> checkpoints_;                // time of event k * kCheckpoint
  int64_t last_ = 0;
  bool in_range_ = true;
};

} // namespace htrace::correct
#endif
