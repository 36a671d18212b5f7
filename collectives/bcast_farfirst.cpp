#include "bcast_farfirst.h"

#include "pending.h"
#include "tags.h"

namespace zipper::coll {

int bcast_farfirst(const Topology& t, void* buf, int count, MPI_Datatype type, int root) {
  Pending p(t);
  if (t.is_local(root)) {
    if (t.rank == root && !t.standalone()) p.isend(buf, count, type, t.remote_member(0), kTagBcast);
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Ibcast(buf, count, type, t.index_in_cluster(root), t.local, &req), &req);
    return p.wait();
  }
  if (t.local_rank == 0) {
    p.irecv(buf, count, type, root, kTagBcast);
    if (int rc = p.wait()) return rc;
  }
  return MPI_Bcast(buf, count, type, 0, t.local);
}

}  // namespace zipper::coll
