#include "correct/input_times.h"

#include <algorithm>

namespace htrace::correct {

InputTimes::Reader::Reader(const InputTimes& times, uint32_t from)
    : deltas_(times.deltas_.data()), apart_(times.apart_.data()) {
  const uint32_t n = static_cast<uint32_t>(times.deltas_.size());
  if (n == 0) return;
  // From the checkpoint before `from`: the time before it follows from the checkpoint's own
  // time and difference (or is not needed, where its time was kept apart).
  const uint32_t start = std::min(from, n - 1) / kCheckpoint * kCheckpoint;
  i_ = start;
  const int64_t t = times.checkpoints_[start / kCheckpoint];
  if (deltas_[start] != kApart)
    prev_ = static_cast<int64_t>(static_cast<uint64_t>(t) - deltas_[start]);
  next_apart_ =
      static_cast<size_t>(std::lower_bound(times.apart_.begin(), times.apart_.end(), start,
                                           [](const std::pair<uint32_t, int64_t>& a, uint32_t e) {
                                             return a.first < e;
                                           }) -
                          times.apart_.begin());
  skip_to(from);
}

EventArray<int64_t> InputTimes::decode() const {
  EventArray<int64_t> out;
  out.reserve(size());
  for (Reader r(*this, 0); r.index() < size(); r.next())
    out.push_back(r.time());
  return out;
}

} // namespace htrace::correct
