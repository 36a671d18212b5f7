// The shared file pointer across the clusters (MPI-3.1 13.4.4): kept in the
// aux file (file_state.h) on the shared file system, as ROMIO keeps it in a
// hidden file, and moved under an fcntl lock (file_lock.h). Ordered access
// takes each rank's place from an allgather of the counts over the MMPI
// communicator (rank order across both clusters) and then writes or reads
// collectively at explicit offsets. Files on one cluster's communicator use
// Open MPI's own shared pointer.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "file_lock.h"
#include "file_request.h"
#include "file_state.h"
#include "mmpi.h"
#include "mmpi_impl_generated.h"

namespace {

using zipper::capi::FileState;
using zipper::capi::RangeLock;

struct SharedPointer {
  std::uint64_t epoch;
  std::int64_t offset;
};

// Reads the pointer as of this rank's view (an older view's reads as 0).
bool read_pointer(const FileState& s, SharedPointer* p) {
  if (pread(s.aux.get(), p, sizeof *p, zipper::capi::kAuxSharedPointer) != sizeof *p) return false;
  if (p->epoch < s.view_epoch) *p = SharedPointer{s.view_epoch, 0};
  return true;
}

bool write_pointer(const FileState& s, SharedPointer p) {
  p.epoch = std::max(p.epoch, s.view_epoch);
  return pwrite(s.aux.get(), &p, sizeof p, zipper::capi::kAuxSharedPointer) == sizeof p;
}

// Moves the pointer by n etypes; *at gets where it was.
int fetch_add(const FileState& s, MPI_Offset n, MPI_Offset* at) {
  RangeLock lock(s.aux.get(), zipper::capi::kAuxSharedPointer, sizeof(SharedPointer), true,
                 s.lock_timeout);
  SharedPointer p{};
  if (!lock.ok() || !read_pointer(s, &p)) return MPI_ERR_IO;
  *at = p.offset;
  p.offset += n;
  return write_pointer(s, p) ? MPI_SUCCESS : MPI_ERR_IO;
}

// Independent shared-pointer access: claim the range, then access it at
// its explicit offset.
template <class F>
int claim(MPI_File fh, FileState* s, int count, MPI_Datatype type, F&& at) {
  MPI_Offset off = 0;
  const int rc = fetch_add(*s, zipper::capi::etypes_of(*s, count, type), &off);
  if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
  return at(off);
}

// Collective ordered access: rank r's place is the pointer plus the counts
// of ranks 0..r-1 of the MMPI communicator; rank 0 moves the pointer past all.
template <class F>
int ordered(MPI_File fh, FileState* s, int count, MPI_Datatype type, F&& at_all) {
  int me = 0, n = 0;
  mmpi_impl_Comm_rank(s->comm, &me);
  mmpi_impl_Comm_size(s->comm, &n);
  const std::int64_t mine = zipper::capi::etypes_of(*s, count, type);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n));
  int rc = mmpi_impl_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, s->comm);
  if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
  std::int64_t before = 0, total = 0;
  for (int r = 0; r < n; ++r) {
    if (r < me) before += counts[static_cast<std::size_t>(r)];
    total += counts[static_cast<std::size_t>(r)];
  }
  std::int64_t base[2] = {0, MPI_SUCCESS};  // {pointer, error}
  if (me == 0) {
    MPI_Offset at = 0;
    base[1] = fetch_add(*s, total, &at);
    base[0] = at;
  }
  rc = mmpi_impl_Bcast(base, 2, MPI_INT64_T, 0, s->comm);
  if (rc == MPI_SUCCESS) rc = static_cast<int>(base[1]);
  if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
  return at_all(static_cast<MPI_Offset>(base[0] + before));
}

}  // namespace

int MMPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_read_shared(fh, buf, count, datatype, status);
  return claim(fh, s, count, datatype, [&](MPI_Offset off) {
    return MMPI_File_read_at(fh, off, buf, count, datatype, status);
  });
}
int MMPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* status) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_write_shared(fh, buf, count, datatype, status);
  return claim(fh, s, count, datatype, [&](MPI_Offset off) {
    return MMPI_File_write_at(fh, off, buf, count, datatype, status);
  });
}
int MMPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) {
    MPI_Request native = MPI_REQUEST_NULL;
    const int rc = MPI_File_iread_shared(fh, buf, count, datatype, &native);
    if (rc == MPI_SUCCESS) *request = zipper::capi::wrap_native_request(native);
    return rc;
  }
  return claim(fh, s, count, datatype, [&](MPI_Offset off) {
    return MMPI_File_iread_at(fh, off, buf, count, datatype, request);
  });
}
int MMPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                            MPI_Request* request) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) {
    MPI_Request native = MPI_REQUEST_NULL;
    const int rc = MPI_File_iwrite_shared(fh, buf, count, datatype, &native);
    if (rc == MPI_SUCCESS) *request = zipper::capi::wrap_native_request(native);
    return rc;
  }
  return claim(fh, s, count, datatype, [&](MPI_Offset off) {
    return MMPI_File_iwrite_at(fh, off, buf, count, datatype, request);
  });
}

int MMPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* status) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_read_ordered(fh, buf, count, datatype, status);
  return ordered(fh, s, count, datatype, [&](MPI_Offset off) {
    return MMPI_File_read_at_all(fh, off, buf, count, datatype, status);
  });
}
int MMPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                            MPI_Status* status) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_write_ordered(fh, buf, count, datatype, status);
  return ordered(fh, s, count, datatype, [&](MPI_Offset off) {
    return MMPI_File_write_at_all(fh, off, buf, count, datatype, status);
  });
}

// Split ordered access: done at _begin, like the other split collectives.
int MMPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  FileState* s = zipper::capi::find_file(fh);
  if (s == nullptr) return zipper::capi::file_error(fh, MPI_ERR_FILE);
  if (s->split_active) return zipper::capi::file_error(fh, MPI_ERR_REQUEST);
  s->split_status = MPI_Status{};
  s->split_rc = MMPI_File_read_ordered(fh, buf, count, datatype, &s->split_status);
  s->split_active = true;
  return s->split_rc;
}
int MMPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  FileState* s = zipper::capi::find_file(fh);
  if (s == nullptr) return zipper::capi::file_error(fh, MPI_ERR_FILE);
  if (s->split_active) return zipper::capi::file_error(fh, MPI_ERR_REQUEST);
  s->split_status = MPI_Status{};
  s->split_rc = MMPI_File_write_ordered(fh, buf, count, datatype, &s->split_status);
  s->split_active = true;
  return s->split_rc;
}
int MMPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  return MMPI_File_read_all_end(fh, buf, status);  // same hand-over
}
int MMPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return MMPI_File_write_all_end(fh, buf, status);
}

int MMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_get_position_shared(fh, offset);
  RangeLock lock(s->aux.get(), zipper::capi::kAuxSharedPointer, sizeof(SharedPointer), false,
                 s->lock_timeout);
  SharedPointer p{};
  if (!lock.ok() || !read_pointer(*s, &p)) return zipper::capi::file_error(fh, MPI_ERR_IO);
  *offset = p.offset;
  return MPI_SUCCESS;
}

int MMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_seek_shared(fh, offset, whence);
  // Collective: every rank's earlier shared access is done before rank 0
  // moves the pointer, and no rank uses it before then.
  int rc = mmpi_impl_Barrier(s->comm);
  if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
  int me = 0;
  mmpi_impl_Comm_rank(s->comm, &me);
  int result = MPI_SUCCESS;
  if (me == 0) {
    RangeLock lock(s->aux.get(), zipper::capi::kAuxSharedPointer, sizeof(SharedPointer), true,
                   s->lock_timeout);
    SharedPointer p{};
    if (!lock.ok() || !read_pointer(*s, &p)) {
      result = MPI_ERR_IO;
    } else {
      MPI_Offset target = offset;
      if (whence == MPI_SEEK_CUR) {
        target = p.offset + offset;
      } else if (whence == MPI_SEEK_END) {
        // The end in etypes past the view's displacement (contiguous
        // filetypes; docs/io.md, "Limits").
        MPI_Offset bytes = 0;
        MPI_File_get_size(fh, &bytes);
        target = (bytes - s->disp) / (s->etype_size > 0 ? s->etype_size : 1) + offset;
      } else if (whence != MPI_SEEK_SET) {
        result = MPI_ERR_ARG;
      }
      if (result == MPI_SUCCESS && target < 0) result = MPI_ERR_ARG;
      if (result == MPI_SUCCESS) {
        p.offset = target;
        if (!write_pointer(*s, p)) result = MPI_ERR_IO;
      }
    }
  }
  rc = mmpi_impl_Bcast(&result, 1, MPI_INT, 0, s->comm);
  if (rc != MPI_SUCCESS) result = rc;
  return result == MPI_SUCCESS ? result : zipper::capi::file_error(fh, result);
}
