#include "correct/record_store.h"

#include "event_store.inc"
#include "format/record_tables.h"

#include <algorithm>
#include <memory>
#include <new>
#include <utility>

namespace htrace::correct {

namespace {

struct AttributeListDeleter {
  void operator()(OTF2_AttributeList* list) const { OTF2_AttributeList_Delete(list); }
};

} // namespace

RecordStore::~RecordStore() {
  release();
}

RecordStore::RecordStore(RecordStore&& other) noexcept
    : blocks_(std::move(other.blocks_)), cur_(std::exchange(other.cur_, nullptr)),
      end_(std::exchange(other.end_, nullptr)), records_(std::exchange(other.records_, 0)) {
  other.blocks_.clear();
}

RecordStore& RecordStore::operator=(RecordStore&& other) noexcept {
  if (this != &other) {
    release();
    blocks_ = std::move(other.blocks_);
    other.blocks_.clear();
    cur_ = std::exchange(other.cur_, nullptr);
    end_ = std::exchange(other.end_, nullptr);
    records_ = std::exchange(other.records_, 0);
  }
  return *this;
}

void RecordStore::release() {
  for (const Block& b : blocks_)
    std::allocator<uint8_t>().deallocate(b.data, b.capacity);
  blocks_.clear();
  cur_ = end_ = nullptr;
  records_ = 0;
}

void RecordStore::start_block(size_t min_size) {
  const size_t capacity = std::max(min_size, kBlockSize);
  blocks_.reserve(blocks_.size() + 1); // no throw between mapping and recording the block
  uint8_t* data = std::allocator<uint8_t>().allocate(capacity); // not zeroed: written first
  if (!blocks_.empty()) blocks_.back().used = static_cast<size_t>(cur_ - blocks_.back().data);
  blocks_.push_back(Block{data, 0, capacity});
  cur_ = data;
  end_ = data + capacity;
}

const uint8_t* RecordStore::block_end(size_t i) const {
  return i + 1 == blocks_.size() ? cur_ : blocks_[i].data + blocks_[i].used;
}

size_t RecordStore::bytes() const {
  size_t total = 0;
  for (size_t i = 0; i < blocks_.size(); ++i)
    total += static_cast<size_t>(block_end(i) - block_begin(i));
  return total;
}

size_t RecordStore::capacity_bytes() const {
  size_t total = 0;
  for (const Block& b : blocks_)
    total += b.capacity;
  return total;
}

namespace store_detail {

uint8_t* put_attributes(uint8_t* p, OTF2_AttributeList* attributes, uint32_t count) {
  uint8_t* count_at = p;
  p += sizeof(uint32_t);
  uint32_t stored = 0;
  for (uint32_t i = 0; i < count; ++i) {
    OTF2_AttributeRef ref;
    OTF2_Type type;
    OTF2_AttributeValue value;
    if (OTF2_AttributeList_GetAttributeByIndex(attributes, i, &ref, &type, &value) != OTF2_SUCCESS)
      continue; // cannot happen for i < count; keeps the count consistent if it does
    p = put(p, ref);
    p = put(p, type);
    p = put(p, value);
    ++stored;
  }
  put(count_at, stored);
  return p;
}

template <class T> inline T get(const uint8_t*& p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  p += sizeof value;
  return value;
}

// Copies n elements into the reusable vector (aligned for T) and returns its data; never null,
// since OTF2 writers reject null arrays.
template <class T, class N> const T* get_array(const uint8_t*& p, std::vector<T>& out, N n) {
  out.resize(std::max<size_t>(n, 1));
  if (n) std::memcpy(out.data(), p, size_t(n) * sizeof(T));
  p += size_t(n) * sizeof(T);
  return out.data();
}

// Refills the (empty: the OTF2 writer clears the list it is given) reusable list.
OTF2_ErrorCode get_attributes(const uint8_t*& p, OTF2_AttributeList* list) {
  const uint32_t count = get<uint32_t>(p);
  OTF2_ErrorCode result = OTF2_SUCCESS;
  for (uint32_t i = 0; i < count; ++i) {
    const auto ref = get<OTF2_AttributeRef>(p);
    const auto type = get<OTF2_Type>(p);
    const auto value = get<OTF2_AttributeValue>(p);
    OTF2_ErrorCode rc = OTF2_AttributeList_AddAttribute(list, ref, type, value);
    if (result == OTF2_SUCCESS) result = rc;
  }
  return result;
}

} // namespace store_detail

// Deprecated record types (Omp*) must be stored and written too.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "event_store_write.inc"
#pragma GCC diagnostic pop

void register_store_events(OTF2_EvtReaderCallbacks* callbacks) {
  register_store_event_callbacks(callbacks);
}

struct StoredEventWriter::Scratch {
  std::unique_ptr<OTF2_AttributeList, AttributeListDeleter> list{OTF2_AttributeList_New()};
  StoredArrays arrays;
};

StoredEventWriter::StoredEventWriter(const RecordStore& store, OTF2_EvtWriter* writer,
                                     uint64_t* counts)
    : store_(store), writer_(writer), counts_(counts), scratch_(std::make_unique<Scratch>()) {
  if (store_.block_count() > 0) p_ = store_.block_begin(0), end_ = store_.block_end(0);
}

StoredEventWriter::~StoredEventWriter() = default;

OTF2_ErrorCode StoredEventWriter::write(const int64_t* times, size_t n) {
  if (n > remaining()) return OTF2_ERROR_INVALID_ARGUMENT;
  if (n == 0) return OTF2_SUCCESS;
  if (!scratch_->list) return OTF2_ERROR_MEM_ALLOC_FAILED;
  for (size_t i = 0; i < n; ++i) {
    while (p_ == end_)
      ++block_, p_ = store_.block_begin(block_), end_ = store_.block_end(block_);
    const uint8_t tag = *p_++;
    const uint8_t type = tag & ~store_detail::kHasAttributes;
    // A failed write may leave attributes behind in the list; the caller abandons the location.
    OTF2_ErrorCode rc = write_stored_record(
        type, tag & store_detail::kHasAttributes, p_, writer_, scratch_->list.get(),
        static_cast<OTF2_TimeStamp>(times[i]), scratch_->arrays);
    if (rc != OTF2_SUCCESS) return rc;
    ++counts_[type];
    ++written_;
  }
  return OTF2_SUCCESS;
}

OTF2_ErrorCode write_stored_events(const RecordStore& store, const int64_t* times, size_t n,
                                   OTF2_EvtWriter* writer, uint64_t* counts) {
  if (n != store.records()) return OTF2_ERROR_INVALID_ARGUMENT;
  return StoredEventWriter(store, writer, counts).write(times, n);
}

} // namespace htrace::correct
