// Location lifetime and lookup: one per thread, created on the thread's first event and kept in
// the process registry until exit so finalize() can write buffers of idle or finished threads.
#include "common/log.h"
#include "format/event_file_encoder.h"
#include "record/location_writer.h"
#include "record/snapshot.h"

#include <cstdlib>
#include <new>

namespace htrace::record {
namespace {

constexpr std::size_t kMinRecords = 16; // even a silly HTRACE_BUFFER_SIZE holds a few events

} // namespace

State& state() {
  // Intentionally leaked (see recorder_state.h).
  static State* const instance = std::make_unique<State>().release();
  return *instance;
}

void State::fail(const std::string& reason) {
  failed = true;
  phase = Phase::Stopped;
  detail::g_thread_lookup_ok = false;
  // What htrace-salvage reports: the cause, without the advice after ';'.
  snapshot::mark_end(("write failure: " + reason.substr(0, reason.find(';'))).c_str());
  if (!failure_logged.exchange(true)) log::error("recording stopped: %s", reason.c_str());
}

void ensure_configured_locked(State& s) {
  if (s.configured) return;
  // The process's one parse; with a bad value it has tracing off (MPI_Init reports it).
  s.options = run_options().options;
  s.configured = true;
  if (!s.options.enable) {
    s.phase = Phase::Disabled;
    detail::g_thread_lookup_ok = false;
  }
}

void configure(const Options& options) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.options = options;
  s.configured = true;
  if (!options.enable) {
    s.phase = Phase::Disabled;
    detail::g_thread_lookup_ok = false;
  }
}

LocationImpl::LocationImpl(std::size_t capacity)
    : buffer_(new EventRecord[capacity]), capacity_(capacity) {
  begin_ = buffer_.get();
  cursor_ = begin_;
  end_ = begin_ + capacity;
}

LocationImpl::~LocationImpl() = default;

LocationId Location::id() const {
  return LocationAccess::id(impl(*this));
}

LocalTime Location::newest_stamp() const {
  const EventRecord* cursor = cursor_.load(std::memory_order_acquire);
  return cursor != begin_ ? cursor[-1].time : LocationAccess::newest_written(impl(*this));
}

EventRecord* Location::overflow() {
  LocationAccess::on_full(impl(*this));
  return cursor_.load(std::memory_order_relaxed);
}

void Location::convert_ahead() {
  LocationAccess::convert_ahead(impl(*this));
}

namespace {

Location* create_location() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ensure_configured_locked(s);
  const Phase phase = s.phase.load();
  if (phase == Phase::Disabled || phase == Phase::Stopped) return nullptr;
  const std::size_t records =
      std::max<std::size_t>(kMinRecords, s.options.buffer_size / sizeof(EventRecord));
  std::unique_ptr<LocationImpl> loc;
  try {
    loc = std::make_unique<LocationImpl>(records);
  } catch (const std::bad_alloc&) {
    log::error("cannot allocate a %zu-byte event buffer (HTRACE_BUFFER_SIZE); this thread is "
               "not traced",
               records * sizeof(EventRecord));
    return nullptr;
  }
  const std::uint32_t index = s.next_index++;
  // Before start() the rank is unknown; start() renumbers and sets the final ids.
  const LocationId id =
      (static_cast<LocationId>(index) << 32) | static_cast<std::uint32_t>(s.rank < 0 ? 0 : s.rank);
  LocationAccess::set_identity(*loc, index, id);
  s.locations.push_back(std::move(loc));
  return s.locations.back().get();
}

} // namespace

Location* detail::thread_slow() {
  if (t_location || !g_thread_lookup_ok.load()) return nullptr;
  t_location = create_location();
  return t_location;
}

/// The calling thread's location without creating one (start() uses it to find thread 0).
Location* existing_thread_location() {
  return detail::t_location;
}

} // namespace htrace::record
