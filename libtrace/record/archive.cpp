// The one translation unit that includes OTF2's MPI and pthread helper headers: they define
// static functions, so a second inclusion would duplicate them.
#include "record/archive.h"

#define OTF2_MPI_USE_PMPI
#include "record/location_writer.h"
#include "record/snapshot.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <otf2/OTF2_MPI_Collectives.h>
#include <otf2/OTF2_Pthread_Locks.h>
#include <otf2/otf2.h>
#include <vector>

namespace htrace::record {
namespace {

// OTF2 writes a full chunk pool in one go on the thread that fills it: small chunks and a small
// pool keep that write far below a millisecond (issue 16); OTF2 accepts 256 KiB .. 16 MiB.
constexpr std::uint64_t kEventChunk = 256 << 10;
constexpr std::size_t kMaxEventChunks = 4;
constexpr std::uint64_t kDefChunk = 4 << 20;

// ---- flush callbacks: mandatory; without them a full writer drops events ----
OTF2_FlushType pre_flush(void*, OTF2_FileType type, OTF2_LocationRef, void*, bool) {
  // Events are about to reach the file: their definitions go to disk first (salvage).
  if (type == OTF2_FILETYPE_EVENTS) snapshot::refresh_from_flush();
  return OTF2_FLUSH;
}

OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return LocationAccess::otf2_flush_end(LocationAccess::being_written(), state());
}

OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

// ---- memory callbacks: cap each event writer's chunk pool so memory stays bounded. OTF2 flushes
// the writer to its file when the allocator returns NULL, then frees the chunks.
struct ChunkPool {
  std::vector<void*> chunks; ///< handed to OTF2
  std::vector<void*> spare;  ///< returned by OTF2 after a flush, kept for the next ones
};

std::size_t max_event_chunks = 2;

void* allocate_chunk(void*, OTF2_FileType type, OTF2_LocationRef, void** per_buffer,
                     std::uint64_t chunk_size) {
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (!pool) {
    pool = new (std::nothrow) ChunkPool; // owned by OTF2's buffer, released in free_chunks
    if (!pool) return nullptr;
    try { // free_chunks then keeps event chunks without allocating
      pool->chunks.reserve(kMaxEventChunks);
      pool->spare.reserve(kMaxEventChunks);
    } catch (const std::bad_alloc&) {
    }
    *per_buffer = pool;
  }
  if (type == OTF2_FILETYPE_EVENTS && pool->chunks.size() >= max_event_chunks) return nullptr;
  // Reusing a chunk avoids an mmap, page faults and a munmap per chunk (malloc maps 256 KiB
  // blocks) on the application thread: OTF2 frees all chunks after every flush of the pool.
  void* chunk = nullptr;
  if (!pool->spare.empty()) {
    chunk = pool->spare.back();
    pool->spare.pop_back();
  } else {
    chunk = std::malloc(chunk_size);
  }
  if (chunk) pool->chunks.push_back(chunk);
  return chunk;
}

void free_chunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (!pool) return;
  if (!final && pool->spare.capacity() >= pool->spare.size() + pool->chunks.size()) {
    pool->spare.insert(pool->spare.end(), pool->chunks.begin(), pool->chunks.end());
    pool->chunks.clear();
    return;
  }
  for (void* chunk : pool->chunks)
    std::free(chunk);
  for (void* chunk : pool->spare)
    std::free(chunk);
  pool->chunks.clear();
  pool->spare.clear();
  if (final) {
    delete pool;
    *per_buffer = nullptr;
  }
}

OTF2_MemoryCallbacks memory_callbacks = {allocate_chunk, free_chunks};

// ---- errors: OTF2 reports failures deep inside its buffers (e.g. a full disk while flushing)
// only through this callback, not through the return codes of the event calls.
thread_local std::string t_last_error;

OTF2_ErrorCode on_otf2_error(void*, const char*, std::uint64_t, const char*, OTF2_ErrorCode code,
                             const char* format, va_list args) {
  if (code <= OTF2_SUCCESS) return code; // warnings and deprecation notes
  char message[512];
  std::vsnprintf(message, sizeof message, format, args);
  t_last_error = std::string(OTF2_Error_GetDescription(code)) + ": " + message;
  State& s = state();
  if (s.archive_ready.load())
    s.fail("writing the trace archive failed (" + t_last_error +
           "); the application continues untraced");
  return code;
}

std::string otf2_reason(const std::string& what, OTF2_ErrorCode rc) {
  return what + ": " + (t_last_error.empty() ? std::string(OTF2_Error_GetName(rc)) : t_last_error);
}

} // namespace

std::string open_archive(State& s, const std::string& path) {
  // Memory bound per event writer: about half the record buffer (OTF2 records are ~4x smaller),
  // 512 KiB to 1 MiB.
  OTF2_Error_RegisterCallback(on_otf2_error, nullptr);
  t_last_error.clear();
  max_event_chunks =
      std::clamp<std::size_t>(s.options.buffer_size / 2 / kEventChunk, 2, kMaxEventChunks);

  OTF2_Archive* archive =
      OTF2_Archive_Open(path.c_str(), "traces", OTF2_FILEMODE_WRITE, kEventChunk, kDefChunk,
                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) return "OTF2_Archive_Open failed";
  s.archive = reinterpret_cast<OTF2_Archive_struct*>(archive);
  OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, nullptr);
  if (rc != OTF2_SUCCESS) return otf2_reason("setting flush callbacks", rc);
  rc = OTF2_Archive_SetMemoryCallbacks(archive, &memory_callbacks, nullptr);
  if (rc != OTF2_SUCCESS) return otf2_reason("setting memory callbacks", rc);
  rc = OTF2_MPI_Archive_SetCollectiveCallbacks(archive, s.comm, MPI_COMM_NULL);
  if (rc != OTF2_SUCCESS) return otf2_reason("creating '" + path + "'", rc);
  rc = OTF2_Pthread_Archive_SetLockingCallbacks(archive, nullptr);
  if (rc != OTF2_SUCCESS) return otf2_reason("setting locking callbacks", rc);
  rc = OTF2_Archive_SetCreator(archive, "htrace");
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetDescription(archive, "MPI/OpenMP trace recorded by libhtrace");
  if (rc != OTF2_SUCCESS) return otf2_reason("setting the archive description", rc);
  rc = OTF2_Archive_OpenEvtFiles(archive);
  if (rc != OTF2_SUCCESS) return otf2_reason("opening event files", rc);
  return "";
}

std::string close_archive(State& s) {
  auto* archive = reinterpret_cast<OTF2_Archive*>(s.archive);
  if (!archive) return "";
  const OTF2_ErrorCode rc = OTF2_Archive_Close(archive);
  s.archive_ready = false;
  s.archive = nullptr;
  return rc == OTF2_SUCCESS ? "" : otf2_reason("closing the archive", rc);
}

} // namespace htrace::record
