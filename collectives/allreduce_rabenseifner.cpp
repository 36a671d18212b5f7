#include "allreduce_rabenseifner.h"

#include "combine.h"
#include "pending.h"
#include "segments.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int allreduce_rabenseifner(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                           MPI_Datatype type, MPI_Op op, int n) {
  const Segments seg(count, t.clamp_senders(n), t.local_size);
  const int me = t.local_rank;
  void* mine = elem(recvbuf, seg.displs[me], type);
  // Where MPI_Reduce_scatter puts an in-place result is easy to get wrong;
  // reducing from a copy keeps every segment at its own displacement.
  TypedBuffer copy;
  if (sendbuf == MPI_IN_PLACE) {
    copy = TypedBuffer(count, type);
    if (int rc = copy_typed(recvbuf, copy.data(), count, type)) return rc;
    sendbuf = copy.data();
  }
  if (int rc = MPI_Reduce_scatter(sendbuf, mine, seg.counts.data(), type, op, t.local)) return rc;
  if (seg.counts[me] > 0 && !t.standalone()) {
    TypedBuffer far(seg.counts[me], type);
    Pending p(t);
    p.irecv(far.data(), seg.counts[me], type, t.remote_offset + me, kTagAllreduce);
    p.isend(mine, seg.counts[me], type, t.remote_offset + me, kTagAllreduce);
    if (int rc = p.wait()) return rc;
    if (int rc = combine(t.high(), mine, far.data(), seg.counts[me], type, op)) return rc;
  }
  return MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, seg.counts.data(),
                        seg.displs.data(), type, t.local);
}

}  // namespace zipper::coll
