// MMPI requests for non-blocking MPI-IO: a native Open MPI I/O request
// wrapped like any native request (every MMPI wait and test completes it),
// or one completed at once (atomic mode does the access blocking, inside
// its lock).
#pragma once

#include <mpi.h>

namespace zipper::capi {

MPI_Request wrap_native_request(MPI_Request native);
MPI_Request completed_request(int rc, const MPI_Status& st);

}  // namespace zipper::capi
