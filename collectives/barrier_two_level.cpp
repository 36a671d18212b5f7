#include "barrier_two_level.h"

#include "pending.h"
#include "tags.h"

namespace zipper::coll {

// The native barriers are waited through wait_native: a rank held in one
// keeps completing inter-cluster sends to its posted receives.
int barrier_two_level(const Topology& t) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(t, MPI_Ibarrier(t.local, &r), &r)) return rc;
  if (!t.standalone() && t.local_rank == 0) {
    Pending p(t);
    p.irecv(nullptr, 0, MPI_BYTE, t.remote_member(0), kTagBarrier);
    p.isend(nullptr, 0, MPI_BYTE, t.remote_member(0), kTagBarrier);
    if (int rc = p.wait()) return rc;
  }
  return wait_native(t, MPI_Ibarrier(t.local, &r), &r);
}

}  // namespace zipper::coll
