// The one translation unit that includes OTF2's MPI and pthread helper headers: they define
// static functions, so a second inclusion would duplicate them.
#include "record/archive.h"

#define OTF2_MPI_USE_PMPI

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

// Event files are written by the recorder itself (event_file_encoder.h) in chunks of this size,
// each with one write() (~60 us per 256 KiB write, a measured order of magnitude): small enough
// not to stall the application; OTF2 accepts 256 KiB .. 16 MiB and its readers take the size from
// the anchor file.
constexpr std::uint64_t kEventChunk = 256 << 10;
constexpr std::uint64_t kDefChunk = 4 << 20;

// ---- flush callbacks: mandatory for OTF2's definition writers, which flush only when closed ----
OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}

OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0; // OTF2 marks flushes only in event files, which it does not write here
}

OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

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

std::size_t archive_event_chunk_size() {
  return kEventChunk;
}

std::string event_file_path(const State& s, LocationId id) {
  return s.archive_path + "/traces/" + std::to_string(id) + ".evt";
}

std::string open_archive(State& s, const std::string& path) {
  OTF2_Error_RegisterCallback(on_otf2_error, nullptr);
  t_last_error.clear();

  OTF2_Archive* archive =
      OTF2_Archive_Open(path.c_str(), "traces", OTF2_FILEMODE_WRITE, kEventChunk, kDefChunk,
                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) return "OTF2_Archive_Open failed";
  s.archive = reinterpret_cast<OTF2_Archive_struct*>(archive);
  OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, nullptr);
  if (rc != OTF2_SUCCESS) return otf2_reason("setting flush callbacks", rc);
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
