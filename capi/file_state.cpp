#include "file_state.h"

#include <mmpi.h>

#include <cstdio>
#include <map>
#include <memory>

namespace zipper::capi {

namespace {
std::map<MPI_File, std::unique_ptr<FileState>>& files() {
  static std::map<MPI_File, std::unique_ptr<FileState>> live;
  return live;
}
}  // namespace

FileState* find_file(MPI_File fh) {
  auto it = files().find(fh);
  return it == files().end() ? nullptr : it->second.get();
}

void add_file(FileState* s) { files()[s->native].reset(s); }

void remove_file(MPI_File fh) { files().erase(fh); }

int file_error(MPI_File fh, int rc) {
  if (rc == MPI_SUCCESS) return rc;
  if (fh != MPI_FILE_NULL) {
    MPI_File_call_errhandler(fh, rc);
    return rc;
  }
  // Open MPI refuses MPI_File_call_errhandler(MPI_FILE_NULL, ...): apply the
  // handler that MPI_File_set_errhandler(MPI_FILE_NULL, ...) set ourselves.
  MPI_Errhandler eh = MPI_ERRORS_RETURN;
  MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
  if (eh == MPI_ERRORS_RETURN) return rc;
  if (eh == MPI_ERRORS_ARE_FATAL) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    std::fprintf(stderr,
                 "mmpi: MPI_File_open failed: %.*s; MPI_ERRORS_ARE_FATAL on MPI_FILE_NULL: "
                 "aborting the job\n",
                 len, text);
    std::fflush(stderr);
    MMPI_Abort(MPI_COMM_WORLD, rc);  // ends both clusters
  }
  // A user handler: called through a scratch file handle (the handler
  // receives that handle, not MPI_FILE_NULL).
  static MPI_File scratch = MPI_FILE_NULL;
  if (scratch == MPI_FILE_NULL && MPI_File_open(MPI_COMM_SELF, "/dev/null", MPI_MODE_RDONLY,
                                                MPI_INFO_NULL, &scratch) != MPI_SUCCESS)
    return rc;
  MPI_File_set_errhandler(scratch, eh);
  MPI_File_call_errhandler(scratch, rc);
  MPI_Errhandler_free(&eh);
  return rc;
}

MPI_Offset etypes_of(const FileState& s, int count, MPI_Datatype type) {
  MPI_Count bytes = 0;  // _x: a type of 2 GiB and more has no int size
  MPI_Type_size_x(type, &bytes);
  return static_cast<MPI_Offset>(count) * bytes / (s.etype_size > 0 ? s.etype_size : 1);
}

}  // namespace zipper::capi
