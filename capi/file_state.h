// MPI-IO across the clusters (docs/io.md): what libmmpi keeps per open file.
//
// An MMPI MPI_File is the native MPI_File that Open MPI's own MPI-IO opened on
// this cluster's native communicator (so the handle works unchanged with
// MPI_File_c2f/f2c, the file error handlers and every pass-through routine).
// Every open file also has a FileState here: a private duplicate of the MMPI
// communicator (MPI_File_get_group; for a file that spans both clusters, the
// operations that span them (open outcome, ordered access, seek_shared, set_size), and the
// "aux" file: the shared-file token created at open, unlinked once every rank
// holds it open, that then holds the shared file pointer and serves as the
// lock of atomic mode (file_lock.h).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "../proto/unique_fd.h"

namespace zipper::capi {

/// Layout of the aux file (bytes): token nonce, then the shared file pointer.
inline constexpr off_t kAuxNonce = 0;
inline constexpr std::size_t kNonceBytes = 16;
inline constexpr off_t kAuxSharedPointer = 16;  // {uint64 view epoch, int64 offset in etypes}
inline constexpr off_t kAuxAtomicLock = 64;     // one byte range, locked in atomic mode
inline constexpr off_t kAuxBytes = 72;

struct FileState {
  MPI_File native = MPI_FILE_NULL;
  /// The communicator spans both clusters: zipper serves shared pointers,
  /// ordered access and atomic mode; otherwise Open MPI does all of it.
  bool spans = false;
  MPI_Comm comm = MPI_COMM_NULL;         // MMPI duplicate of the open's communicator
  MPI_Comm native_comm = MPI_COMM_NULL;  // this cluster's part (collective locking)
  std::string path;                      // as given to MPI_File_open
  int amode = 0;                         // as given (the native file lacks DELETE_ON_CLOSE)
  proto::UniqueFd aux;
  /// The longest wait for a lock on aux (file_lock.h): MMPI_FILE_LOCK_TIMEOUT
  /// as read at MMPI_Init (client/settings.h).
  std::chrono::seconds lock_timeout{300};
  bool atomic = false;
  /// Views set so far (MPI_File_set_view is collective, so every rank counts
  /// alike); a shared pointer stored under an older epoch reads as 0.
  std::uint64_t view_epoch = 0;
  MPI_Aint etype_size = 1;  // bytes of the view's etype (MPI_BYTE by default)
  MPI_Offset disp = 0;      // the view's displacement (bytes)
  // A split collective in progress (at most one per file, MPI-3.1 13.4.5):
  // done at _begin, its outcome handed over by _end.
  bool split_active = false;
  int split_rc = MPI_SUCCESS;
  MPI_Status split_status{};
};

/// The FileState of a file that MMPI_File_open opened, or null.
FileState* find_file(MPI_File fh);
/// The FileState of fh when it spans both clusters, else null.
inline FileState* spanning_file(MPI_File fh) {
  FileState* s = find_file(fh);
  return s != nullptr && s->spans ? s : nullptr;
}
/// Registers an open file (takes ownership); forgets it again.
void add_file(FileState* s);
void remove_file(MPI_File fh);

/// Applies fh's error handler (MPI_FILE_NULL's for open) to an error that
/// libmmpi raised itself, and returns rc. Errors that Open MPI returned have
/// seen the handler already (the native file is the user's handle).
int file_error(MPI_File fh, int rc);

/// Elements of `type` times `count` in etypes of the file's view (shared and
/// ordered access move the shared pointer by this many).
MPI_Offset etypes_of(const FileState& s, int count, MPI_Datatype type);

}  // namespace zipper::capi
