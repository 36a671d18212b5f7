// Sends built on the standard ones (MPI-3.1 3.4, 3.10): ready sends are
// standard sends here (a ready send is correct only if the receive is
// posted, and then a standard send is too), and Sendrecv_replace receives
// into scratch laid out like the buffer, then copies over what came.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include "../collectives/typed_buffer.h"
#include "coll_checks.h"

using namespace zipper::capi;

extern "C" {

int mmpi_impl_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm) {
  return mmpi_impl_Send(buf, count, datatype, dest, tag, comm);
}

int mmpi_impl_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return mmpi_impl_Isend(buf, count, datatype, dest, tag, comm, request);
}

int mmpi_impl_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                               int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (int rc = check_buf(count, datatype)) return rc;
  // Receive into scratch laid out like buf, then copy over what was sent.
  zipper::coll::TypedBuffer in(count, datatype);
  MPI_Status st{};
  if (status != MPI_STATUS_IGNORE) st = *status;  // keeps the caller's MPI_ERROR
  const int rc = mmpi_impl_Sendrecv(buf, count, datatype, dest, sendtag, in.data(), count, datatype,
                                    source, recvtag, comm, &st);
  if (status != MPI_STATUS_IGNORE) *status = st;
  if (rc != MPI_SUCCESS || source == MPI_PROC_NULL) return rc;
  int received = 0;
  MPI_Get_count(&st, datatype, &received);
  if (received == MPI_UNDEFINED) received = count;  // partial element: copy what fits
  return zipper::coll::copy_typed(in.data(), buf, received, datatype);
}

}  // extern "C"
