#include "correct/input_times.h"

#include <algorithm>

namespace htrace::correct {

InputTimes::Reader::Reader(const InputTimes& times, uint32_t from)
    : deltas_(&times.deltas_), apart_(&times.apart_),
      n_(static_cast<uint32_t>(times.deltas_.size())) {
  if (n_ == 0) return;
  const uint32_t start = std::min(from, n_ - 1) / kCheckpoint * kCheckpoint;
  i_ = start;
  t_ = times.checkpoints_[start / kCheckpoint];
  // The checkpoint holds the time of `start` itself, also where it was kept apart.
  next_apart_ =
      static_cast<size_t>(std::upper_bound(apart_->begin(), apart_->end(), start,
                                           [](uint32_t e, const std::pair<uint32_t, int64_t>& a) {
                                             return e < a.first;
                                           }) -
                          apart_->begin());
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
