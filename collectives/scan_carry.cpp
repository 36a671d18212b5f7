#include "scan_carry.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int scan_carry(const Topology& t, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, bool exclusive) {
  TypedBuffer inc(count, type), carry(count, type);
  if (int rc = MPI_Scan(sendbuf, inc.data(), count, type, op, t.local)) return rc;
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
    if (int rc = MPI_Bcast(carry.data(), count, type, 0, t.local)) return rc;
    // MPI_Reduce_local(in, inout): inout = carry (op) inout, the carry's ranks come first.
    if (count > 0)
      if (int rc = MPI_Reduce_local(carry.data(), inc.data(), count, type, op)) return rc;
  }
  if (!exclusive) return copy_typed(inc.data(), recvbuf, count, type);
  const int next = me + 1 < t.local_size ? me + 1 : MPI_PROC_NULL;
  const int prev = me > 0 ? me - 1 : MPI_PROC_NULL;
  if (int rc = MPI_Sendrecv(inc.data(), count, type, next, kTagScan, recvbuf, count, type, prev,
                            kTagScan, t.local, MPI_STATUS_IGNORE))
    return rc;
  return second && me == 0 ? copy_typed(carry.data(), recvbuf, count, type) : MPI_SUCCESS;
}

}  // namespace zipper::coll
