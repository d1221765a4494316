#include "location_scan.h"

#include "format/error.h"
#include "format/event_decoder.h"
#include "format/event_file.h"
#include "format/record_tables.h"

#include <algorithm>
#include <cstring>

namespace htrace::score {
namespace {

// Records that complete a request inside a wait or test, besides those of MPI requests (decoded
// below): with one, an excluded wait or test is still recorded (wrapper_call.h, record_if).
constexpr const char* kCompletionRecords[] = {"RmaOpCompleteNonBlocking", "IoOperationComplete"};

// Read pages of a mapped event file are given back every this many bytes.
constexpr std::size_t kReleaseStep = 4u << 20;

LocationScan& of(void* user) {
  return *static_cast<LocationScan*>(user);
}

OTF2_CallbackCode on_enter(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user,
                           OTF2_AttributeList*, OTF2_RegionRef region) {
  LocationScan& s = of(user);
  s.kind_ = LocationScan::Kind::Enter;
  s.region_ = region;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_leave(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user,
                           OTF2_AttributeList*, OTF2_RegionRef region) {
  LocationScan& s = of(user);
  s.kind_ = LocationScan::Kind::Leave;
  s.region_ = region;
  return OTF2_CALLBACK_SUCCESS;
}

void on_other(void* user, OTF2_TimeStamp, int type) {
  LocationScan& s = of(user);
  s.kind_ = LocationScan::Kind::Other;
  s.type_ = type;
}

OTF2_CallbackCode request(void* user, LocationScan::Request kind, uint64_t id) {
  LocationScan& s = of(user);
  s.kind_ = LocationScan::Kind::Other;
  s.type_ = -1;
  s.request_kind_ = kind;
  s.request_ = id;
  return OTF2_CALLBACK_SUCCESS;
}

using Request = LocationScan::Request;

OTF2_CallbackCode on_isend(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user,
                           OTF2_AttributeList*, uint32_t, OTF2_CommRef, uint32_t, uint64_t,
                           uint64_t id) {
  return request(user, Request::Post, id);
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user,
                           OTF2_AttributeList*, uint32_t, OTF2_CommRef, uint32_t, uint64_t,
                           uint64_t id) {
  return request(user, Request::Complete, id);
}
template <Request kind>
OTF2_CallbackCode on_request(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user,
                             OTF2_AttributeList*, uint64_t id) {
  return request(user, kind, id);
}
OTF2_CallbackCode on_nbc_complete(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user,
                                  OTF2_AttributeList*, OTF2_CollectiveOp, OTF2_CommRef, uint32_t,
                                  uint64_t, uint64_t, uint64_t id) {
  return request(user, Request::Complete, id);
}

const format::EventDecodeCallbacks& callbacks() {
  static const format::EventDecodeCallbacks c = [] {
    format::EventDecodeCallbacks cb;
    cb.Enter = on_enter;
    cb.Leave = on_leave;
    cb.MpiIsend = on_isend;
    cb.MpiIrecvRequest = on_request<Request::Post>;
    cb.NonBlockingCollectiveRequest = on_request<Request::Post>;
    cb.MpiIsendComplete = on_request<Request::Complete>;
    cb.MpiIrecv = on_irecv;
    cb.MpiRequestCancelled = on_request<Request::Complete>;
    cb.NonBlockingCollectiveComplete = on_nbc_complete;
    cb.MpiRequestTest = on_request<Request::Test>;
    return cb;
  }();
  return c;
}

// OTF2's encoding of a compressed unsigned integer: a byte count n <= 8 and n little-endian bytes,
// or 0xff for all ones. The decoder has validated the list, so only its bounds are checked here.
bool read_compressed(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& out) {
  if (p >= end) return false;
  const std::uint8_t n = *p++;
  if (n == 0xff) {
    out = ~std::uint64_t(0);
    return true;
  }
  if (n > 8 || n > end - p) return false;
  out = 0;
  std::memcpy(&out, p, n); // little-endian host, like the file (event_file.h)
  p += n;
  return true;
}

// Bytes of an attribute value of OTF2 type `type` that are stored raw; 0 for compressed ones.
std::size_t raw_value_size(std::uint8_t type) {
  switch (type) {
  case OTF2_TYPE_UINT8:
  case OTF2_TYPE_INT8:
    return 1;
  case OTF2_TYPE_UINT16:
  case OTF2_TYPE_INT16:
    return 2;
  case OTF2_TYPE_FLOAT:
    return 4;
  case OTF2_TYPE_DOUBLE:
    return 8;
  default:
    return 0;
  }
}

} // namespace

RowIndex::RowIndex(const std::vector<OTF2_RegionRef>& refs) {
  const auto n = static_cast<std::uint32_t>(refs.size());
  outside_ = n;
  undefined_ = n + 1;
  OTF2_RegionRef largest = 0;
  for (OTF2_RegionRef r : refs)
    largest = std::max(largest, r);
  // Dense where the refs are (writers number regions from 0); a hash for the rest.
  const std::size_t dense = std::min<std::size_t>(std::size_t(largest) + 1, 4 * refs.size() + 1024);
  dense_.assign(dense, undefined_);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (refs[i] < dense_.size())
      dense_[refs[i]] = i;
    else
      sparse_[refs[i]] = i;
  }
}

LocationScan::LocationScan(const RowIndex& index, std::vector<RegionRow>& rows, PollAttribute polls)
    : index_(index), rows_(rows), polls_(polls) {
  stack_.reserve(64);
  completion_types_.assign(static_cast<std::size_t>(format::event_record_type_count()) + 1, false);
  for (int type = 0; type < format::event_record_type_count(); ++type)
    for (const char* name : kCompletionRecords)
      if (std::strcmp(format::event_record_name(type), name) == 0)
        completion_types_[static_cast<std::size_t>(type)] = true;
}

void LocationScan::scan(format::MappedFile& file, std::size_t chunk_size, OTF2_LocationRef location,
                        const format::IdMaps* maps, RankTally& rank, const std::string& path) {
  const std::uint8_t* const data = file.data();
  const std::size_t size = file.size();
  stack_.clear();
  follow_on_.clear();
  posts_.clear();
  last_row_ = index_.outside();
  format::EventFileParser parser(data, size, chunk_size);
  const std::uint8_t* previous_end = data;
  std::uint64_t position = 0;
  std::size_t released = 0;
  format::DecodeError error;
  const bool whole = parser.for_each([&](const format::RawEvent& e) {
    request_kind_ = Request::None;
    error = format::decode_event(e, data, ++position, callbacks(), on_other, location, this, maps);
    if (error) return false;
    const auto bytes = static_cast<std::uint64_t>(e.end - previous_end);
    previous_end = e.end;
    if (e.time < rank.first) rank.first = e.time;
    if (e.time > rank.last) rank.last = e.time;
    on_event(e, bytes, rank, maps);
    if (static_cast<std::size_t>(e.end - data) >= released + kReleaseStep) {
      released = static_cast<std::size_t>(e.end - data);
      file.release_before(released);
    }
    return true;
  });
  if (!whole) {
    const char* why = error ? error.why : parser.error();
    const std::size_t offset = error ? error.offset : parser.error_offset();
    throw input_error("'" + path + "': " + (why ? why : "unreadable event file") + " at byte " +
                      std::to_string(offset));
  }
  // The end-of-file record goes to the last event's row (a file without events: all of it to the
  // row outside any region). Calls still open at the end keep what was counted for them, and
  // their completions of others' requests count for the posters.
  for (const FollowOn& f : follow_on_)
    add_follow_on(f);
  add_bytes(last_row_, static_cast<std::uint64_t>(data + size - previous_end), rank);
}

void LocationScan::attribute(std::uint32_t row, std::uint64_t bytes, RankTally& rank) {
  ++rows_[row].records;
  ++rank.records;
  add_bytes(row, bytes, rank);
  last_row_ = row;
}

void LocationScan::add_bytes(std::uint32_t row, std::uint64_t bytes, RankTally& rank) {
  RegionRow& r = rows_[row];
  r.bytes += bytes;
  rank.bytes += bytes;
  if (r.fixed()) rank.fixed_bytes += bytes;
}

void LocationScan::on_event(const format::RawEvent& e, std::uint64_t bytes, RankTally& rank,
                            const format::IdMaps* maps) {
  switch (kind_) {
  case Kind::Enter: {
    const std::uint32_t row = index_.row(region_);
    attribute(row, bytes, rank);
    stack_.push_back({region_, row, false, 1, bytes, follow_on_.size()});
    if (rows_[row].lifecycle == RegionRow::Lifecycle::Finalize && rank.finalize_begin == UINT64_MAX)
      rank.finalize_begin = e.time;
    return;
  }
  case Kind::Leave: {
    const std::uint32_t row = index_.row(region_);
    attribute(row, bytes, rank);
    if (rows_[row].lifecycle == RegionRow::Lifecycle::Init && rank.init_end == UINT64_MAX)
      rank.init_end = e.time;
    if (stack_.empty() || stack_.back().region != region_) {
      ++mismatched_;
      ++rows_[row].calls;
      return;
    }
    Frame f = stack_.back();
    stack_.pop_back();
    ++f.records;
    f.bytes += bytes;
    const bool has_attributes = e.begin[0] == format::EventFileParser::kAttributeList;
    close_call(f, has_attributes && polls_.defined ? polls_of(e.begin, maps) : 0);
    return;
  }
  case Kind::Other: {
    if (stack_.empty()) {
      attribute(index_.outside(), bytes, rank);
    } else {
      Frame& f = stack_.back();
      attribute(f.row, bytes, rank);
      ++f.records;
      f.bytes += bytes;
      if (request_kind_ == Request::Complete ||
          (type_ >= 0 && static_cast<std::size_t>(type_) < completion_types_.size() &&
           completion_types_[static_cast<std::size_t>(type_)]))
        f.completed = true;
    }
    // A completion leaves its timestamp behind: the call's Leave, at the same time, takes it.
    if (request_kind_ != Request::None) note_request(static_cast<std::uint64_t>(e.end - e.begin));
    return;
  }
  }
}

void LocationScan::note_request(std::uint64_t bytes) {
  const std::uint32_t row = stack_.empty() ? index_.outside() : stack_.back().row;
  if (request_kind_ == Request::Post) {
    posts_.post(request_, row);
    return;
  }
  const std::uint32_t poster = posts_.poster(request_, request_kind_ == Request::Complete);
  if (poster == UINT32_MAX || poster == row) return;
  // Decided when the call holding it closes: removed with that call, or with the poster.
  if (stack_.empty())
    add_follow_on({poster, bytes});
  else
    follow_on_.push_back({poster, bytes});
}

void LocationScan::add_follow_on(const FollowOn& f) {
  RegionRow& r = rows_[f.poster];
  if (r.mpi == nullptr || !r.mpi->excludable) return;
  ++r.follow_on_records;
  r.follow_on_bytes += f.bytes;
  ++r.removable_records;
  r.removable_bytes += f.bytes;
}

void LocationScan::close_call(const Frame& f, std::uint64_t polls) {
  RegionRow& r = rows_[f.row];
  const std::uint64_t calls = polls != 0 ? polls : 1;
  r.calls += calls;
  bool removable = r.mpi != nullptr && r.mpi->excludable;
  if (removable) removable = call_removable(r, f, polls);
  // The completions it holds of requests other calls posted: gone with this call if its
  // exclusion removes it, else with their posters'.
  if (!removable)
    for (std::size_t i = f.follow_on_begin; i < follow_on_.size(); ++i)
      add_follow_on(follow_on_[i]);
  follow_on_.resize(f.follow_on_begin);
  if (!removable) return;
  r.removable_calls += calls;
  r.removable_records += f.records;
  r.removable_bytes += f.bytes;
}

bool LocationScan::call_removable(const RegionRow& r, const Frame& f, std::uint64_t polls) const {
  bool removable = true;
  switch (r.mpi->kept) {
  case Kept::Never:
    break;
  case Kept::Always:
    removable = false;
    break;
  case Kept::UnlessMissedPoll:
    removable = polls != 0;
    break;
  case Kept::IfCompleted:
    // In an archive with runs of polls a poll's Leave without HTRACE::POLLS was successful.
    removable = !f.completed && (!(r.mpi->poll && polls_.defined) || polls != 0);
    break;
  }
  return removable;
}

std::uint64_t LocationScan::polls_of(const std::uint8_t* list, const format::IdMaps* maps) const {
  // [6][length: 1 byte, or 0xff and 8][count][entries: attribute, type, value]
  const std::uint8_t* p = list + 1;
  std::uint64_t length = *p++;
  if (length == 0xff) {
    std::memcpy(&length, p, 8);
    p += 8;
  }
  const std::uint8_t* const end = p + length;
  std::uint64_t count = 0;
  if (!read_compressed(p, end, count)) return 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t id = 0, value = 0;
    if (!read_compressed(p, end, id) || p >= end) return 0;
    const std::uint8_t type = *p++;
    if (const std::size_t raw = raw_value_size(type)) {
      if (std::size_t(end - p) < raw) return 0;
      p += raw;
      continue;
    }
    if (!read_compressed(p, end, value)) return 0;
    if (maps) id = maps->map(OTF2_MAPPING_ATTRIBUTE, id);
    if (id == polls_.id && type == OTF2_TYPE_UINT64) return value;
  }
  return 0;
}

} // namespace htrace::score
