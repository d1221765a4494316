#include "mpi/io_events.h"

#include "mpi/comm_registry.h"
#include "mpi/handles.h"
#include "mpi/p2p_events.h"

#include <atomic>
#include <mutex>
#include <otf2/otf2.h>
#include <unordered_map>

namespace htrace::mpi {
namespace {

/// An open MPI_File, with its split collective in progress (MPI allows one per file).
struct OpenFile {
  record::IoHandleId handle = 0;
  record::IoFileId file = 0;
  bool delete_on_close = false;     ///< MPI_MODE_DELETE_ON_CLOSE: closing deletes the file
  std::uint64_t split_matching = 0; ///< 0: none in progress
};

std::mutex g_mutex;
std::unordered_map<std::uint64_t, OpenFile>& files() {
  static auto* table = new std::unordered_map<std::uint64_t, OpenFile>; // outlives exit handlers
  return *table;
}

std::atomic<std::uint64_t> g_next_matching{1};
std::uint64_t new_matching_id() {
  return g_next_matching.fetch_add(1, std::memory_order_relaxed);
}

bool handle_of(MPI_File file, record::IoHandleId& handle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = files().find(handle_key(file));
  if (it == files().end()) return false;
  handle = it->second.handle;
  return true;
}

std::uint64_t bytes_done(int rc, const MPI_Status* status) {
  int count = 0;
  if (rc != MPI_SUCCESS || PMPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS ||
      count == MPI_UNDEFINED || count < 0)
    return 0;
  return static_cast<std::uint64_t>(count);
}

std::uint8_t otf2_mode(IoMode mode) {
  return mode == IoMode::Read ? OTF2_IO_OPERATION_MODE_READ : OTF2_IO_OPERATION_MODE_WRITE;
}

std::uint8_t access_mode(int amode) {
  if (amode & MPI_MODE_RDWR) return OTF2_IO_ACCESS_MODE_READ_WRITE;
  if (amode & MPI_MODE_WRONLY) return OTF2_IO_ACCESS_MODE_WRITE_ONLY;
  return OTF2_IO_ACCESS_MODE_READ_ONLY;
}

std::uint32_t creation_flags(int amode) {
  std::uint32_t f = OTF2_IO_CREATION_FLAG_NONE;
  if (amode & MPI_MODE_CREATE) f |= OTF2_IO_CREATION_FLAG_CREATE;
  if (amode & MPI_MODE_EXCL) f |= OTF2_IO_CREATION_FLAG_EXCLUSIVE;
  return f;
}

std::uint32_t status_flags(int amode) {
  std::uint32_t f = OTF2_IO_STATUS_FLAG_NONE;
  if (amode & MPI_MODE_APPEND) f |= OTF2_IO_STATUS_FLAG_APPEND;
  if (amode & MPI_MODE_DELETE_ON_CLOSE) f |= OTF2_IO_STATUS_FLAG_DELETE_ON_CLOSE;
  return f;
}

std::uint8_t otf2_whence(int whence) {
  if (whence == MPI_SEEK_CUR) return OTF2_IO_SEEK_FROM_CURRENT;
  if (whence == MPI_SEEK_END) return OTF2_IO_SEEK_FROM_END;
  return OTF2_IO_SEEK_FROM_START;
}

} // namespace

void on_file_open(record::Location& loc, record::LocalTime t, int rc, MPI_Comm comm,
                  const char* filename, int amode, MPI_File file) {
  if (rc != MPI_SUCCESS || file == MPI_FILE_NULL || filename == nullptr) return;
  const record::IoFileId f = record::register_io_file(filename);
  const record::IoHandleId h = record::register_io_handle(filename, f, comm_id(comm));
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    files()[handle_key(file)] = OpenFile{h, f, (amode & MPI_MODE_DELETE_ON_CLOSE) != 0, 0};
  }
  loc.io_create_handle(t, h, access_mode(amode), creation_flags(amode), status_flags(amode));
}

void on_file_close(record::Location& loc, record::LocalTime t, int rc, MPI_File file) {
  if (rc != MPI_SUCCESS) return;
  OpenFile closed;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = files().find(handle_key(file));
    if (it == files().end()) return;
    closed = it->second;
    files().erase(it);
  }
  if (closed.delete_on_close) loc.io_delete_file(t, closed.file);
  loc.io_destroy_handle(t, closed.handle);
}

void on_file_delete(record::Location& loc, record::LocalTime t, int rc, const char* filename) {
  if (rc != MPI_SUCCESS || filename == nullptr) return;
  loc.io_delete_file(t, record::register_io_file(filename));
}

void on_file_io(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                MPI_File file, IoMode mode, std::uint32_t flags, int count, MPI_Datatype type,
                const MPI_Status* status) {
  record::IoHandleId h = 0;
  if (!handle_of(file, h)) return;
  const std::uint64_t matching = new_matching_id();
  loc.io_operation_begin(entered, h, otf2_mode(mode), flags, bytes_of(count, type), matching);
  loc.io_operation_complete(t, h, bytes_done(rc, status), matching);
}

void on_file_iio(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                 MPI_File file, IoMode mode, std::uint32_t flags, int count, MPI_Datatype type,
                 MPI_Request request) {
  record::IoHandleId h = 0;
  if (!handle_of(file, h)) return;
  const std::uint64_t matching = new_matching_id();
  const std::uint64_t requested = bytes_of(count, type);
  loc.io_operation_begin(entered, h, otf2_mode(mode), flags | kIoNonBlocking, requested, matching);
  if (rc != MPI_SUCCESS || request == MPI_REQUEST_NULL) {
    loc.io_operation_complete(t, h, 0, matching); // nothing was started
    return;
  }
  loc.io_operation_issued(t, h, matching);
  PendingRequest p;
  p.kind = PendingRequest::Kind::Io;
  p.comm = h; // the I/O handle
  p.bytes = requested;
  p.id = matching;
  track_request(request, p);
}

void on_file_split_begin(record::Location& loc, record::LocalTime entered, record::LocalTime t,
                         int rc, MPI_File file, IoMode mode, int count, MPI_Datatype type) {
  record::IoHandleId h = 0;
  const std::uint64_t matching = new_matching_id();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = files().find(handle_key(file));
    if (it == files().end()) return;
    h = it->second.handle;
    if (rc == MPI_SUCCESS) it->second.split_matching = matching;
  }
  loc.io_operation_begin(entered, h, otf2_mode(mode), kIoCollective | kIoNonBlocking,
                         bytes_of(count, type), matching);
  if (rc == MPI_SUCCESS)
    loc.io_operation_issued(t, h, matching);
  else
    loc.io_operation_complete(t, h, 0, matching);
}

void on_file_split_end(record::Location& loc, record::LocalTime t, int rc, MPI_File file,
                       const MPI_Status* status) {
  record::IoHandleId h = 0;
  std::uint64_t matching = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = files().find(handle_key(file));
    if (it == files().end() || it->second.split_matching == 0) return;
    h = it->second.handle;
    matching = it->second.split_matching;
    if (rc == MPI_SUCCESS) it->second.split_matching = 0;
  }
  if (rc == MPI_SUCCESS) loc.io_operation_complete(t, h, bytes_done(rc, status), matching);
}

void on_file_seek(record::Location& loc, record::LocalTime t, int rc, MPI_File file,
                  MPI_Offset offset, int whence, bool shared) {
  record::IoHandleId h = 0;
  if (rc != MPI_SUCCESS || !handle_of(file, h)) return;
  // The new position in the units of the request (etypes of the view), as Score-P writes it.
  MPI_Offset position = 0;
  const int got = shared ? PMPI_File_get_position_shared(file, &position)
                         : PMPI_File_get_position(file, &position);
  loc.io_seek(t, h, static_cast<std::int64_t>(offset), otf2_whence(whence),
              got == MPI_SUCCESS ? static_cast<std::uint64_t>(position) : 0);
}

void on_file_sync(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                  MPI_File file) {
  record::IoHandleId h = 0;
  if (!handle_of(file, h)) return;
  (void)rc;
  const std::uint64_t matching = new_matching_id();
  loc.io_operation_begin(entered, h, OTF2_IO_OPERATION_MODE_FLUSH, kIoCollective, 0, matching);
  loc.io_operation_complete(t, h, 0, matching);
}

void on_io_request_complete(record::Location& loc, record::LocalTime t, const PendingRequest& p,
                            const MPI_Status* status) {
  loc.io_operation_complete(t, p.comm, bytes_done(MPI_SUCCESS, status), p.id);
}

void on_io_request_test(record::Location& loc, record::LocalTime t, const PendingRequest& p) {
  loc.io_operation_test(t, p.comm, p.id);
}

} // namespace htrace::mpi
