// File views, size and atomicity of an MMPI file (docs/io.md, "Views and
// consistency"). The view itself is Open MPI's (any derived etype and
// filetype, every data representation it knows); zipper only notes what the
// shared file pointer needs: a new view resets it to 0 (MPI-3.1 13.3), which
// the view epoch does without a round trip between the clusters.
#include "file_state.h"
#include "handles.h"
#include "mmpi.h"
#include "mmpi_impl_generated.h"

using zipper::capi::FileState;

int MMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char* datarep, MPI_Info info) {
  FileState* span = zipper::capi::spanning_file(fh);
  if (span != nullptr && disp == MPI_DISPLACEMENT_CURRENT) {
    // The current position of the shared pointer (zipper's, not Open MPI's),
    // in bytes, as rank 0 reads it once every rank has entered.
    MPI_Offset at[2] = {0, MPI_SUCCESS};
    int me = 0;
    mmpi_impl_Comm_rank(span->comm, &me);
    int rc = mmpi_impl_Barrier(span->comm);
    if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
    if (me == 0) {
      MPI_Offset shared = 0;
      at[1] = MMPI_File_get_position_shared(fh, &shared);
      if (at[1] == MPI_SUCCESS) at[1] = MPI_File_get_byte_offset(fh, shared, &at[0]);
    }
    rc = mmpi_impl_Bcast(at, 2, MPI_OFFSET, 0, span->comm);
    if (rc == MPI_SUCCESS) rc = static_cast<int>(at[1]);
    if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
    disp = at[0];
  }
  const int rc = MPI_File_set_view(fh, disp, etype, filetype, datarep, info);
  FileState* s = zipper::capi::find_file(fh);
  if (rc != MPI_SUCCESS || s == nullptr) return rc;
  MPI_Count bytes = 1;
  MPI_Type_size_x(etype, &bytes);
  s->etype_size = bytes;
  s->disp = disp;
  ++s->view_epoch;
  return MPI_SUCCESS;
}

int MMPI_File_set_atomicity(MPI_File fh, int flag) {
  // Native atomic mode orders each cluster's ranks; the aux file's lock
  // (file_lock.h) orders the clusters.
  const int rc = MPI_File_set_atomicity(fh, flag);
  FileState* s = zipper::capi::spanning_file(fh);
  if (rc == MPI_SUCCESS && s != nullptr) s->atomic = flag != 0;
  return rc;
}

int MMPI_File_set_size(MPI_File fh, MPI_Offset size) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_set_size(fh, size);
  // Both clusters truncate: neither may cut what the other writes after the
  // call, nor write before it what the other then cuts.
  int rc = mmpi_impl_Barrier(s->comm);
  if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
  rc = MPI_File_set_size(fh, size);
  const int brc = mmpi_impl_Barrier(s->comm);
  if (rc != MPI_SUCCESS) return rc;
  return brc == MPI_SUCCESS ? brc : zipper::capi::file_error(fh, brc);
}

int MMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  FileState* s = zipper::capi::spanning_file(fh);
  if (s == nullptr) return MPI_File_preallocate(fh, size);
  // Open MPI preallocates by reading what is there and writing it back: two
  // clusters doing so at once could write back what the other just changed.
  // Rank 0's cluster alone does it, between barriers, and tells the other.
  int rc = mmpi_impl_Barrier(s->comm);
  if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
  std::shared_ptr<zipper::client::Comm> c;
  zipper::client::Runtime* rt = nullptr;
  zipper::capi::lookup(s->comm, &rt, &c);
  int outcome = MPI_SUCCESS;
  if (c->map().is_local(0)) {
    outcome = MPI_File_preallocate(fh, size);
    if (outcome != MPI_SUCCESS) MPI_Error_class(outcome, &outcome);
  }
  int agreed = MPI_SUCCESS;
  rc = mmpi_impl_Allreduce(&outcome, &agreed, 1, MPI_INT, MPI_MAX, s->comm);
  if (rc != MPI_SUCCESS) return zipper::capi::file_error(fh, rc);
  if (agreed != MPI_SUCCESS && outcome == MPI_SUCCESS) return zipper::capi::file_error(fh, agreed);
  return agreed;
}
