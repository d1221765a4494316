// Copying one location's events from OTF2's reader to a writer, for a location whose process may
// have died: every record type through the generated copy callbacks, stopping where timestamps
// go backwards (garbage from an unfinished write), and keeping the regions still open so that a
// cut-off can close them.
#pragma once

#include "format/record_tables.h"

#include <cstdint>
#include <otf2/otf2.h>
#include <string>
#include <vector>

namespace htrace::salvage {

/// Copies one location's events into `out` through the generated copy callbacks (every record
/// type), tracking what a cut-off needs.
class LocationCopy final : public format::EventSink {
public:
  OTF2_EvtWriter* out = nullptr;
  std::vector<OTF2_RegionRef> open; ///< regions entered and not left, innermost last
  OTF2_TimeStamp first = 0, last = 0;
  std::uint64_t events = 0;
  std::uint64_t unknown = 0;
  OTF2_ErrorCode write_error = OTF2_SUCCESS;
  std::string damage; ///< why copying stopped early ("" if it did not)

  static LocationCopy& of(void* user) {
    return static_cast<LocationCopy&>(*static_cast<format::EventSink*>(user));
  }

  OTF2_TimeStamp begin_record(OTF2_LocationRef, OTF2_TimeStamp t, int) override {
    // libhtrace never writes a decreasing timestamp: one is garbage from an unfinished write.
    backwards_ = events > 0 && t < last;
    if (backwards_) damage = "timestamps go backwards after " + std::to_string(events) + " events";
    time_ = t;
    return t;
  }
  OTF2_EvtWriter* writer(OTF2_LocationRef) override { return backwards_ ? nullptr : out; }
  OTF2_CallbackCode end_record(OTF2_ErrorCode written) override {
    write_error = written;
    if (backwards_ || written != OTF2_SUCCESS) return OTF2_CALLBACK_INTERRUPT;
    if (events++ == 0) first = time_;
    last = time_;
    return OTF2_CALLBACK_SUCCESS;
  }

private:
  bool backwards_ = false;
  OTF2_TimeStamp time_ = 0;
};

/// The reader callbacks; their user data is a LocationCopy, passed as its format::EventSink*.
void register_callbacks(OTF2_EvtReaderCallbacks* callbacks);

} // namespace htrace::salvage
