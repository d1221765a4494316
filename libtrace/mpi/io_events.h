// MPI-IO recorded with OTF2's I/O records, as Score-P writes them: one IoHandle per MPI_File
// (its file, the communicator it was opened on), IoCreateHandle/IoDestroyHandle at open/close with
// the access mode and flags, IoOperationBegin/IoOperationComplete around every read and write
// with bytes requested and done, IoOperationIssued for non-blocking and split-collective ones
// (completed at their wait/test or _end call), IoSeek, IoDeleteFile. Called from generated
// wrappers only while tracing, after the PMPI call.
#pragma once

#include "mpi/handles.h"
#include "mpi/request_table.h"
#include "record/recorder.h"

#include <mpi.h>

namespace htrace::mpi {

enum class IoMode : std::uint8_t { Read, Write };
/// OTF2_IoOperationFlag bits.
enum IoFlags : std::uint32_t { kIoBlocking = 0, kIoNonBlocking = 1u << 0, kIoCollective = 1u << 1 };

void on_file_open(record::Location& loc, record::LocalTime t, int rc, MPI_Comm comm,
                  const char* filename, int amode, MPI_File file);
/// `file` is the handle before the call (MPI_File_close sets it to MPI_FILE_NULL).
void on_file_close(record::Location& loc, record::LocalTime t, int rc, MPI_File file);
void on_file_delete(record::Location& loc, record::LocalTime t, int rc, const char* filename);

/// Blocking read or write (independent or collective); bytes done from `status`.
void on_file_io(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                MPI_File file, IoMode mode, std::uint32_t flags, int count, MPI_Datatype type,
                const MPI_Status* status);
/// Non-blocking read or write: completed by the wait/test of `request`.
void on_file_iio(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                 MPI_File file, IoMode mode, std::uint32_t flags, int count, MPI_Datatype type,
                 MPI_Request request);
/// Split collective: _begin issues, _end completes (one outstanding per file, says MPI).
void on_file_split_begin(record::Location& loc, record::LocalTime entered, record::LocalTime t,
                         int rc, MPI_File file, IoMode mode, int count, MPI_Datatype type);
void on_file_split_end(record::Location& loc, record::LocalTime t, int rc, MPI_File file,
                       const MPI_Status* status);
/// MPI_File_seek / MPI_File_seek_shared: the result is the new position (etypes of the view).
void on_file_seek(record::Location& loc, record::LocalTime t, int rc, MPI_File file,
                  MPI_Offset offset, int whence, bool shared);
/// MPI_File_sync: a flush operation.
void on_file_sync(record::Location& loc, record::LocalTime entered, record::LocalTime t, int rc,
                  MPI_File file);

/// Completion of a request made by on_file_iio (from the wait/test wrappers).
void on_io_request_complete(record::Location& loc, record::LocalTime t, const PendingRequest& p,
                            const MPI_Status* status);
void on_io_request_test(record::Location& loc, record::LocalTime t, const PendingRequest& p);

} // namespace htrace::mpi
