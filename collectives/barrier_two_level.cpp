#include "barrier_two_level.h"

#include "pending.h"
#include "tags.h"

namespace zipper::coll {

int barrier_two_level(const Topology& t) {
  if (int rc = MPI_Barrier(t.local)) return rc;
  if (!t.standalone() && t.local_rank == 0) {
    Pending p(t);
    p.irecv(nullptr, 0, MPI_BYTE, t.remote_member(0), kTagBarrier);
    p.isend(nullptr, 0, MPI_BYTE, t.remote_member(0), kTagBarrier);
    if (int rc = p.wait()) return rc;
  }
  return MPI_Barrier(t.local);
}

}  // namespace zipper::coll
