#include "chunk_pool.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace htrace::salvage {
namespace {

/// The chunks of one OTF2 buffer: allocated once, handed out again after each write.
struct BufferChunks {
  std::vector<std::unique_ptr<std::byte[]>> chunks;
  std::size_t used = 0;
};

void* allocate(void*, OTF2_FileType type, OTF2_LocationRef, void** per_buffer,
               std::uint64_t chunk_size) {
  auto* buffer = static_cast<BufferChunks*>(*per_buffer);
  if (!buffer) {
    auto created = std::unique_ptr<BufferChunks>(new (std::nothrow) BufferChunks);
    if (!created) return nullptr;
    buffer = created.release(); // owned by OTF2's buffer until free_all(final)
    *per_buffer = buffer;
  }
  // NULL tells OTF2 the memory is exhausted: it writes the buffer's chunks to the file, calls
  // free_all (not final) and asks again.
  if (type == OTF2_FILETYPE_EVENTS && buffer->used == kChunksPerEventBuffer) return nullptr;
  if (buffer->used == buffer->chunks.size()) {
    std::unique_ptr<std::byte[]> chunk(new (std::nothrow) std::byte[chunk_size]);
    if (!chunk) return nullptr;
    buffer->chunks.push_back(std::move(chunk));
  }
  return buffer->chunks[buffer->used++].get();
}

void free_all(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* buffer = static_cast<BufferChunks*>(*per_buffer);
  if (!buffer) return;
  if (final) {
    std::unique_ptr<BufferChunks> owned(buffer);
    *per_buffer = nullptr;
  } else {
    buffer->used = 0;
  }
}

const OTF2_MemoryCallbacks kCallbacks = {allocate, free_all};

} // namespace

OTF2_ErrorCode bound_event_buffers(OTF2_Archive* archive) {
  return OTF2_Archive_SetMemoryCallbacks(archive, &kCallbacks, nullptr);
}

} // namespace htrace::salvage
