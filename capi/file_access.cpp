// Data access with explicit offsets and individual file pointers (MPI-3.1
// 13.4.2-13.4.3): blocking, non-blocking and split collective. The access
// is Open MPI's on the native file: each rank reads and writes the file
// system directly and collective buffering stays within its cluster. What
// zipper adds: atomic mode's lock across the clusters (file_lock.h), MMPI
// requests (file_request.h), and split collectives done at _begin.
#include "file_lock.h"
#include "file_request.h"
#include "file_state.h"
#include "mmpi.h"

namespace {

using zipper::capi::AtomicSection;
using zipper::capi::FileState;

// Runs one native access inside atomic mode's section (a no-op otherwise).
template <class F>
int guarded(MPI_File fh, bool collective, bool write, F&& access) {
  AtomicSection section(zipper::capi::spanning_file(fh), collective, write);
  if (section.rc() != MPI_SUCCESS) return zipper::capi::file_error(fh, section.rc());
  return access();
}

// A non-blocking access: natively non-blocking, or in atomic mode done at
// once (inside the lock) behind a completed request.
template <class Blocking, class Start>
int start(MPI_File fh, bool collective, bool write, MPI_Request* request, Blocking&& blocking,
          Start&& native_start) {
  const FileState* s = zipper::capi::spanning_file(fh);
  if (s != nullptr && s->atomic) {
    MPI_Status st{};
    const int rc = guarded(fh, collective, write, [&] { return blocking(&st); });
    *request = zipper::capi::completed_request(rc, st);
    return rc;
  }
  MPI_Request native = MPI_REQUEST_NULL;
  const int rc = native_start(&native);
  if (rc == MPI_SUCCESS) *request = zipper::capi::wrap_native_request(native);
  return rc;
}

// Split collectives: the collective runs at _begin; _end hands over its
// status and error (MPI-3.1 13.4.5 allows _begin to block).
template <class F>
int split_begin(MPI_File fh, F&& collective) {
  FileState* s = zipper::capi::find_file(fh);
  if (s == nullptr) return zipper::capi::file_error(fh, MPI_ERR_FILE);
  if (s->split_active) return zipper::capi::file_error(fh, MPI_ERR_REQUEST);
  s->split_active = true;
  s->split_status = MPI_Status{};
  s->split_rc = collective(&s->split_status);
  return s->split_rc;
}

int split_end(MPI_File fh, MPI_Status* status) {
  FileState* s = zipper::capi::find_file(fh);
  if (s == nullptr) return zipper::capi::file_error(fh, MPI_ERR_FILE);
  if (!s->split_active) return zipper::capi::file_error(fh, MPI_ERR_REQUEST);
  s->split_active = false;
  if (status != MPI_STATUS_IGNORE) *status = s->split_status;
  return s->split_rc;
}

}  // namespace

// Explicit offsets.
int MMPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                      MPI_Status* status) {
  return guarded(fh, false, false,
                 [&] { return MPI_File_read_at(fh, offset, buf, count, datatype, status); });
}
int MMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* status) {
  return guarded(fh, true, false,
                 [&] { return MPI_File_read_at_all(fh, offset, buf, count, datatype, status); });
}
int MMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                       MPI_Datatype datatype, MPI_Status* status) {
  return guarded(fh, false, true,
                 [&] { return MPI_File_write_at(fh, offset, buf, count, datatype, status); });
}
int MMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                           MPI_Datatype datatype, MPI_Status* status) {
  return guarded(fh, true, true,
                 [&] { return MPI_File_write_at_all(fh, offset, buf, count, datatype, status); });
}
int MMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                       MPI_Request* request) {
  return start(
      fh, false, false, request,
      [&](MPI_Status* st) { return MPI_File_read_at(fh, offset, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iread_at(fh, offset, buf, count, datatype, r); });
}
int MMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                           MPI_Datatype datatype, MPI_Request* request) {
  return start(
      fh, true, false, request,
      [&](MPI_Status* st) { return MPI_File_read_at_all(fh, offset, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iread_at_all(fh, offset, buf, count, datatype, r); });
}
int MMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                        MPI_Datatype datatype, MPI_Request* request) {
  return start(
      fh, false, true, request,
      [&](MPI_Status* st) { return MPI_File_write_at(fh, offset, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iwrite_at(fh, offset, buf, count, datatype, r); });
}
int MMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                            MPI_Datatype datatype, MPI_Request* request) {
  return start(
      fh, true, true, request,
      [&](MPI_Status* st) { return MPI_File_write_at_all(fh, offset, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iwrite_at_all(fh, offset, buf, count, datatype, r); });
}

// Individual file pointers.
int MMPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return guarded(fh, false, false, [&] { return MPI_File_read(fh, buf, count, datatype, status); });
}
int MMPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                       MPI_Status* status) {
  return guarded(fh, true, false,
                 [&] { return MPI_File_read_all(fh, buf, count, datatype, status); });
}
int MMPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                    MPI_Status* status) {
  return guarded(fh, false, true, [&] { return MPI_File_write(fh, buf, count, datatype, status); });
}
int MMPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                        MPI_Status* status) {
  return guarded(fh, true, true,
                 [&] { return MPI_File_write_all(fh, buf, count, datatype, status); });
}
int MMPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                    MPI_Request* request) {
  return start(
      fh, false, false, request,
      [&](MPI_Status* st) { return MPI_File_read(fh, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iread(fh, buf, count, datatype, r); });
}
int MMPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                        MPI_Request* request) {
  return start(
      fh, true, false, request,
      [&](MPI_Status* st) { return MPI_File_read_all(fh, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iread_all(fh, buf, count, datatype, r); });
}
int MMPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                     MPI_Request* request) {
  return start(
      fh, false, true, request,
      [&](MPI_Status* st) { return MPI_File_write(fh, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iwrite(fh, buf, count, datatype, r); });
}
int MMPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                         MPI_Request* request) {
  return start(
      fh, true, true, request,
      [&](MPI_Status* st) { return MPI_File_write_all(fh, buf, count, datatype, st); },
      [&](MPI_Request* r) { return MPI_File_iwrite_all(fh, buf, count, datatype, r); });
}

// Split collectives.
int MMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                MPI_Datatype datatype) {
  return split_begin(fh, [&](MPI_Status* st) {
    return MMPI_File_read_at_all(fh, offset, buf, count, datatype, st);
  });
}
int MMPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  (void)buf;
  return split_end(fh, status);
}
int MMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                 MPI_Datatype datatype) {
  return split_begin(fh, [&](MPI_Status* st) {
    return MMPI_File_write_at_all(fh, offset, buf, count, datatype, st);
  });
}
int MMPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  (void)buf;
  return split_end(fh, status);
}
int MMPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return split_begin(
      fh, [&](MPI_Status* st) { return MMPI_File_read_all(fh, buf, count, datatype, st); });
}
int MMPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  (void)buf;
  return split_end(fh, status);
}
int MMPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return split_begin(
      fh, [&](MPI_Status* st) { return MMPI_File_write_all(fh, buf, count, datatype, st); });
}
int MMPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  (void)buf;
  return split_end(fh, status);
}
