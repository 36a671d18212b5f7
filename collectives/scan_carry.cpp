#include "scan_carry.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int scan_carry(const Topology& t, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, bool exclusive) {
  TypedBuffer inc(count, type), carry(count, type);
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(t, MPI_Iscan(sendbuf, inc.data(), count, type, op, t.local, &r), &r))
    return rc;
  const int me = t.index_in_cluster(t.rank);
  const bool second = !t.standalone() && !t.is_local(0);
  if (!t.standalone()) {
    Pending p(t);
    if (!second && me == t.local_size - 1)
      p.isend(inc.data(), count, type, t.remote_member(0), kTagScan);
    if (second && me == 0)
      p.irecv(carry.data(), count, type, t.remote_member(t.remote_size - 1), kTagScan);
    if (int rc = p.wait()) return rc;
  }
  if (second) {
    if (int rc = wait_native(t, MPI_Ibcast(carry.data(), count, type, 0, t.local, &r), &r))
      return rc;
    // MPI_Reduce_local(in, inout): inout = carry (op) inout, the carry's ranks come first.
    if (count > 0)
      if (int rc = MPI_Reduce_local(carry.data(), inc.data(), count, type, op)) return rc;
  }
  if (!exclusive) return copy_typed(inc.data(), recvbuf, count, type);
  const int next = me + 1 < t.local_size ? me + 1 : MPI_PROC_NULL;
  const int prev = me > 0 ? me - 1 : MPI_PROC_NULL;
  {
    Pending p(t);
    MPI_Request in = MPI_REQUEST_NULL, out = MPI_REQUEST_NULL;
    p.add(MPI_Irecv(recvbuf, count, type, prev, kTagScan, t.local, &in), &in);
    p.add(MPI_Isend(inc.data(), count, type, next, kTagScan, t.local, &out), &out);
    if (int rc = p.wait()) return rc;
  }
  return second && me == 0 ? copy_typed(carry.data(), recvbuf, count, type) : MPI_SUCCESS;
}

}  // namespace zipper::coll
