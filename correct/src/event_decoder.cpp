#include "correct/event_decoder.h"

#include "correct/event_file.h"

#include <cstring>
#include <type_traits>

namespace htrace::correct {
namespace {

enum class DecodeStatus { Done, NoCallback, Malformed, Interrupted };

DecodeStatus done(OTF2_CallbackCode rc) {
  return rc == OTF2_CALLBACK_SUCCESS ? DecodeStatus::Done : DecodeStatus::Interrupted;
}

// OTF2's encoding of the fields read here: a one-byte type as it is; a wider unsigned integer
// compressed: a byte count n <= its size followed by n little-endian bytes, or 0xff for all ones.
template <class T> bool read_field(const uint8_t*& p, const uint8_t* end, T& out) {
  static_assert(std::is_unsigned_v<T>, "only unsigned integers are decoded");
  if (p >= end) return false;
  if constexpr (sizeof(T) == 1) {
    out = *p++;
    return true;
  } else {
    const uint8_t n = *p++;
    if (n == 0xff) {
      out = static_cast<T>(~T(0));
      return true;
    }
    if (n > sizeof(T) || n > end - p) return false;
    uint64_t v = 0;
    std::memcpy(&v, p, n); // little-endian host: the file's byte order (event_file.h)
    p += n;
    out = static_cast<T>(v);
    return true;
  }
}

#include "event_decode_switch.inc"

} // namespace

const char* decode_event_file(const uint8_t* data, size_t size, size_t chunk_size,
                              const EventDecodeCallbacks& callbacks, OtherEventFn other,
                              OTF2_LocationRef location, void* user) {
  EventFileParser parser(data, size, chunk_size);
  uint64_t position = 0;
  const char* error = nullptr;
  const bool read = parser.for_each([&](const RawEvent& e) {
    ++position;
    const DecodeStatus s =
        decode_fields(callbacks, e.type, e.fields, e.end, location, e.time, position, user);
    if (s == DecodeStatus::NoCallback) {
      other(user, e.time, e.type);
      return true;
    }
    if (s == DecodeStatus::Malformed) error = "a record ends before its fields";
    if (s == DecodeStatus::Interrupted) error = "interrupted by a callback";
    return s == DecodeStatus::Done;
  });
  if (read) return nullptr;
  return error ? error : parser.error() ? parser.error() : "unreadable event file";
}

} // namespace htrace::correct
