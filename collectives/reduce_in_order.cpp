#include "reduce_in_order.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int reduce_in_order(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int root) {
  // MPI_IN_PLACE (allreduce: on every rank): the contribution is in recvbuf.
  const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  Pending p(t);
  if (t.rank != root) {
    p.isend(mine, count, type, root, kTagReduce);
    return p.wait();
  }
  TypedBuffer acc(count, type), next(count, type);
  // acc = v_{p-1}, then acc = v_r op acc for r = p-2 .. 0.
  for (int r = t.size - 1; r >= 0; --r) {
    void* v = r == t.size - 1 ? acc.data() : next.data();
    if (r == root) {
      if (int rc = copy_typed(mine, v, count, type)) return rc;
    } else {
      p.irecv(v, count, type, r, kTagReduce);
      if (int rc = p.wait()) return rc;
    }
    if (r < t.size - 1 && count > 0)
      if (int rc = MPI_Reduce_local(next.data(), acc.data(), count, type, op)) return rc;
  }
  return copy_typed(acc.data(), recvbuf, count, type);
}

}  // namespace zipper::coll
