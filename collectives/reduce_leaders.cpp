#include "reduce_leaders.h"

#include "combine.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int reduce_leaders(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, int root) {
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    TypedBuffer far;
    if (am_root && !t.standalone()) {
      far = TypedBuffer(count, type);
      p.irecv(far.data(), count, type, t.remote_member(0), kTagReduce);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Ireduce(sendbuf, recvbuf, count, type, op, t.index_in_cluster(root), t.local, &req),
          &req);
    if (int rc = p.wait()) return rc;
    if (am_root && !t.standalone()) return combine(t.high(), recvbuf, far.data(), count, type, op);
    return MPI_SUCCESS;
  }
  TypedBuffer partial(t.local_rank == 0 ? count : 0, type);
  if (int rc = MPI_Reduce(sendbuf, partial.data(), count, type, op, 0, t.local)) return rc;
  if (t.local_rank == 0) {
    p.isend(partial.data(), count, type, root, kTagReduce);
    return p.wait();
  }
  return MPI_SUCCESS;
}

}  // namespace zipper::coll
