// The corrected timestamps of the owned locations, produced in event order a chunk at a time, so
// that no timestamp per event has to be held for the whole run.
#ifndef HTRACE_CORRECT_TIME_SOURCE_H
#define HTRACE_CORRECT_TIME_SOURCE_H

#include <cstddef>
#include <cstdint>

namespace htrace::correct {

class TimeSource {
public:
  virtual ~TimeSource() = default;
  // Starts LocalModel::locations[index]; locations are started in index order. Starting the
  // current location again restarts it, forgetting what its earlier pass counted (a writer whose
  // copy of the event file failed writes it another way).
  virtual void begin(size_t index) = 0;
  // Fills up to `max` next corrected timestamps of the started location into `out`, and the same
  // events' input timestamps into `input`; returns the count, 0 at its end.
  virtual size_t next(int64_t* out, int64_t* input, size_t max) = 0;

  static constexpr size_t kChunk = 4096; // timestamps per call that callers ask for
};

} // namespace htrace::correct
#endif
