#include "file_close_barrier.h"

#include <mutex>
#include <vector>

#include "mmpi_impl_generated.h"

namespace zipper::capi {

namespace {

std::mutex& pending_mutex() {
  static std::mutex m;
  return m;
}

std::vector<MPI_Request>& pending() {
  static std::vector<MPI_Request> v;
  return v;
}

}  // namespace

int start_close_barrier(MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = mmpi_impl_Ibarrier(comm, &r)) return rc;
  std::lock_guard<std::mutex> g(pending_mutex());
  pending().push_back(r);
  return MPI_SUCCESS;
}

int complete_close_barriers() {
  std::vector<MPI_Request> mine;
  {
    std::lock_guard<std::mutex> g(pending_mutex());
    mine.swap(pending());
  }
  int first = MPI_SUCCESS;
  for (MPI_Request& r : mine) {
    const int rc = mmpi_impl_Wait(&r, MPI_STATUS_IGNORE);
    if (first == MPI_SUCCESS) first = rc;
  }
  return first;
}

}  // namespace zipper::capi
