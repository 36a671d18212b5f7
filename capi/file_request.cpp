#include "file_request.h"

#include "handles.h"

namespace zipper::capi {

MPI_Request wrap_native_request(MPI_Request native) {
  auto r = std::make_unique<client::Request>();
  r->kind = client::RequestKind::kNative;
  r->native = native;
  return to_handle(std::move(r));
}

MPI_Request completed_request(int rc, const MPI_Status& st) {
  auto r = std::make_unique<client::Request>();
  r->kind = client::RequestKind::kCompleted;
  r->complete = true;
  r->error = rc;
  MPI_Count bytes = 0;  // _x: an access of 2 GiB and more has no int count
  if (rc == MPI_SUCCESS) MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
  r->status_bytes = bytes > 0 ? static_cast<std::uint64_t>(bytes) : 0;
  return to_handle(std::move(r));
}

}  // namespace zipper::capi
