#include "format/event_decoder.h"

#include "format/event_file.h"
#include "format/record_tables.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <otf2/OTF2_GeneralDefinitions.h>
#include <type_traits>

namespace htrace::format {
namespace {

enum class DecodeStatus { Done, NoCallback, Malformed, Interrupted };

DecodeStatus done(OTF2_CallbackCode rc) {
  return rc == OTF2_CALLBACK_SUCCESS ? DecodeStatus::Done : DecodeStatus::Interrupted;
}

// OTF2's encoding of the fields read here: a one-byte type as it is; a wider unsigned integer
// compressed: a byte count n <= its size followed by n little-endian bytes, or 0xff for all ones.
// (Inlined by force: called for every field of every decoded record, and GCC keeps it out of line
// in decode_fields' large switch.)
template <class T>
[[gnu::always_inline]] inline bool read_field(const uint8_t*& p, const uint8_t* end, T& out) {
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
    // Little-endian, assembled in a register: a copy of n bytes into a variable read back whole
    // cannot be forwarded from the store buffer, and waits for every store before it to reach
    // the cache (the sinks' stores of the last event, often to lines not in the cache).
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i)
      v |= uint64_t{p[i]} << (8 * i);
    p += n;
    out = static_cast<T>(v);
    return true;
  }
}

// The checks of event_validate.inc: a value of T's encoding, n raw bytes, an array's length.
template <class T> bool skip_field(const uint8_t*& p, const uint8_t* end) {
  T value;
  return read_field(p, end, value);
}
bool skip_raw(const uint8_t*& p, const uint8_t* end, size_t n) {
  if (size_t(end - p) < n) return false;
  p += n;
  return true;
}
template <class T> bool read_count(const uint8_t*& p, const uint8_t* end, uint64_t& count) {
  T value;
  if (!read_field(p, end, value)) return false;
  count = value;
  return true;
}

#include "event_decode_switch.inc"
#include "event_validate.inc"

// OTF2's bound on an attribute list's length: 15 bytes per entry and 5 for the count.
constexpr uint64_t kMaxAttributeEntryBytes = 15, kMaxAttributeCountBytes = 5;

// One attribute value of type `type`, encoded as OTF2 encodes OTF2_AttributeValue.
bool skip_attribute_value(uint8_t type, const uint8_t*& p, const uint8_t* end) {
  switch (type) {
  case OTF2_TYPE_UINT8:
  case OTF2_TYPE_INT8:
    return skip_raw(p, end, 1);
  case OTF2_TYPE_UINT16:
  case OTF2_TYPE_INT16:
    return skip_raw(p, end, 2);
  case OTF2_TYPE_FLOAT:
    return skip_raw(p, end, 4);
  case OTF2_TYPE_DOUBLE:
    return skip_raw(p, end, 8);
  case OTF2_TYPE_UINT32:
  case OTF2_TYPE_INT32:
  case OTF2_TYPE_STRING:
  case OTF2_TYPE_ATTRIBUTE:
  case OTF2_TYPE_REGION:
  case OTF2_TYPE_GROUP:
  case OTF2_TYPE_METRIC:
  case OTF2_TYPE_COMM:
  case OTF2_TYPE_PARAMETER:
  case OTF2_TYPE_RMA_WIN:
  case OTF2_TYPE_SOURCE_CODE_LOCATION:
  case OTF2_TYPE_CALLING_CONTEXT:
  case OTF2_TYPE_INTERRUPT_GENERATOR:
  case OTF2_TYPE_IO_FILE:
  case OTF2_TYPE_IO_HANDLE:
  case OTF2_TYPE_LOCATION_GROUP:
    return skip_field<uint32_t>(p, end);
  default: // OTF2_TYPE_UINT64, INT64, LOCATION, and types of later versions
    return skip_field<uint64_t>(p, end);
  }
}

// An attribute list record ([6][length][count][id, type, value]...) as OTF2's reader checks it:
// the length within its bound, every entry's encoding, no attribute twice. The parser has
// checked that the record lies within its chunk.
const char* attribute_list_error(const uint8_t* list) {
  const uint8_t* p = list + 1;
  uint64_t length = *p++;
  if (length == 0xff) {
    std::memcpy(&length, p, 8);
    p += 8;
  }
  const uint8_t* const end = p + length;
  uint32_t count;
  // (Each entry takes at least 3 bytes: a count beyond the length is damage, not a size.)
  if (!read_field(p, end, count) || count > length) return "invalid attribute count";
  if (length > count * kMaxAttributeEntryBytes + kMaxAttributeCountBytes)
    return "attribute list longer than its entries";
  std::array<uint32_t, 16> seen_small;
  std::vector<uint32_t> seen_large;
  uint32_t* seen = seen_small.data();
  if (count > seen_small.size()) {
    seen_large.resize(count);
    seen = seen_large.data();
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (!read_field(p, end, seen[i]) || p >= end) return "invalid attribute entry";
    const uint8_t type = *p++;
    if (!skip_attribute_value(type, p, end)) return "invalid attribute value";
  }
  std::sort(seen, seen + count);
  if (std::adjacent_find(seen, seen + count) != seen + count) return "an attribute set twice";
  return nullptr;
}

} // namespace

bool IdMaps::set(OTF2_MappingType type, const OTF2_IdMap* map) {
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  OTF2_IdMap_Traverse(
      map,
      [](uint64_t local, uint64_t global, void* u) {
        static_cast<std::vector<std::pair<uint64_t, uint64_t>>*>(u)->emplace_back(local, global);
      },
      &pairs);
  return set(type, std::move(pairs));
}

bool IdMaps::set(OTF2_MappingType type, std::vector<std::pair<uint64_t, uint64_t>> pairs) {
  if (type >= OTF2_MAPPING_MAX) return false;
  if (!tables_) tables_ = std::make_unique<std::array<Table, OTF2_MAPPING_MAX>>();
  Table& t = (*tables_)[type];
  if (t.present) return false;
  t.present = true;
  std::sort(pairs.begin(), pairs.end());
  // A local id listed twice: which one OTF2 would use is its implementation's choice.
  if (std::adjacent_find(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
        return a.first == b.first;
      }) != pairs.end())
    return false;
  const uint64_t largest = pairs.empty() ? 0 : pairs.back().first;
  if (!pairs.empty() && largest < 4 * pairs.size() + 1024) {
    t.dense.resize(static_cast<size_t>(largest) + 1);
    for (size_t i = 0; i < t.dense.size(); ++i)
      t.dense[i] = i;
    for (const auto& [local, global] : pairs)
      t.dense[static_cast<size_t>(local)] = global;
  } else {
    t.sparse = std::move(pairs);
  }
  return true;
}

uint64_t IdMaps::sparse_lookup(const Table& t, uint64_t id) {
  auto it = std::lower_bound(t.sparse.begin(), t.sparse.end(), id,
                             [](const auto& p, uint64_t v) { return p.first < v; });
  return it != t.sparse.end() && it->first == id ? it->second : id;
}

namespace {

// The number of Metric records (record_tables.h numbering).
const int kMetricType = [] {
  for (int type = 0; type < event_record_type_count(); ++type)
    if (std::strcmp(event_record_name(type), "Metric") == 0) return type;
  return -1;
}();

// A Metric record as OTF2's reader decodes it: the metric (mapped), the count, then each value's
// type and value (a compressed 64-bit integer, whatever the type).
DecodeStatus decode_metric(OTF2_EvtReaderCallback_Metric metric, const uint8_t* p,
                           const uint8_t* end, OTF2_LocationRef location, OTF2_TimeStamp time,
                           uint64_t position, void* user, const IdMaps* maps) {
  OTF2_MetricRef ref;
  uint8_t n;
  if (!read_field(p, end, ref) || !read_field(p, end, n)) return DecodeStatus::Malformed;
  if (maps) ref = static_cast<OTF2_MetricRef>(maps->map(OTF2_MAPPING_METRIC, ref));
  std::array<OTF2_Type, 256> types;
  std::array<OTF2_MetricValue, 256> values;
  for (unsigned i = 0; i < n; ++i) {
    uint64_t value;
    if (!read_field(p, end, types[i]) || !read_field(p, end, value)) return DecodeStatus::Malformed;
    values[i].unsigned_int = value;
  }
  return done(metric(location, time, position, user, nullptr, ref, n, types.data(), values.data()));
}

// One event: its attribute list checked, its fields decoded into its callback (or `other`).
// Returns why it failed, or nullptr.
inline const char* decode_one(const RawEvent& e, uint64_t position,
                              const EventDecodeCallbacks& callbacks, OtherEventFn other,
                              OTF2_LocationRef location, void* user, const IdMaps* maps,
                              OTF2_EvtReaderCallback_Metric metric) {
  if (e.begin[0] == EventFileParser::kAttributeList) {
    if (const char* why = attribute_list_error(e.begin)) return why;
  }
  DecodeStatus s =
      metric && e.type == kMetricType
          ? decode_metric(metric, e.fields, e.end, location, e.time, position, user, maps)
          : decode_fields(callbacks, e.type, e.fields, e.end, location, e.time, position, user,
                          maps);
  if (s == DecodeStatus::NoCallback) {
    if (!fields_valid(e.type, e.fields, e.end)) {
      s = DecodeStatus::Malformed;
    } else {
      other(user, e.time, e.type);
      return nullptr;
    }
  }
  if (s == DecodeStatus::Malformed) return "a record's fields are not encoded as OTF2 reads them";
  if (s == DecodeStatus::Interrupted) return "interrupted by a callback";
  return nullptr;
}

} // namespace

DecodeError decode_event_file(const uint8_t* data, size_t size, size_t chunk_size,
                              const EventDecodeCallbacks& callbacks, OtherEventFn other,
                              OTF2_LocationRef location, void* user, const IdMaps* maps) {
  EventFileParser parser(data, size, chunk_size);
  uint64_t position = 0;
  DecodeError error;
  const bool read = parser.for_each([&](const RawEvent& e) {
    error.offset = static_cast<size_t>(e.begin - data);
    error.why = decode_one(e, ++position, callbacks, other, location, user, maps, nullptr);
    return error.why == nullptr;
  });
  if (read) return {};
  if (error) return error;
  if (parser.error()) return {parser.error(), parser.error_offset()};
  return {"unreadable event file", 0};
}

DecodeError decode_event(const RawEvent& event, const uint8_t* file, uint64_t position,
                         const EventDecodeCallbacks& callbacks, OtherEventFn other,
                         OTF2_LocationRef location, void* user, const IdMaps* maps,
                         OTF2_EvtReaderCallback_Metric metric) {
  const char* why = decode_one(event, position, callbacks, other, location, user, maps, metric);
  return {why, why ? static_cast<size_t>(event.begin - file) : 0};
}

} // namespace htrace::format
