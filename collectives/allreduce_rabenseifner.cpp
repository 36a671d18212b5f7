#include "allreduce_rabenseifner.h"

#include "combine.h"
#include "pending.h"
#include "pipeline_segments.h"
#include "segments.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {
namespace {

// Steps 2-4 for group j: gather at the leader, exchange with the far leader,
// hand back. `recvbuf` holds this rank's reduced piece at its displacement.
int exchange_segment(const Topology& t, const GroupedSegments& g, void* recvbuf, MPI_Datatype type,
                     MPI_Op op, std::uint64_t segment_bytes) {
  const int me = t.local_rank, j = g.group_of(me);
  const int lead = g.leader(j, t.local_size), end = g.leader(j + 1, t.local_size);
  if (me != lead) {
    Pending p(t);
    void* piece = elem(recvbuf, g.displs[me], type);
    p.isend(piece, g.counts[me], type, t.local_member(lead), kTagAllreduce);
    p.irecv(piece, g.counts[me], type, t.local_member(lead), kTagAllreduce);
    return p.wait();
  }
  {
    Pending p(t);
    for (int m = lead + 1; m < end; ++m)
      p.irecv(elem(recvbuf, g.displs[m], type), g.counts[m], type, t.local_member(m),
              kTagAllreduce);
    if (int rc = p.wait()) return rc;
  }
  void* seg = elem(recvbuf, g.seg_displs[j], type);
  const int n = g.seg_counts[j];
  if (n > 0) {
    TypedBuffer far(n, type);
    Pending p(t);
    const int far_lead = t.remote_member(g.leader(j, t.remote_size));
    const PipelineSegments pieces(n, type, segment_bytes);
    irecv_segments(p, far.data(), type, pieces, far_lead, kTagAllreduce);
    isend_segments(p, seg, type, pieces, far_lead, kTagAllreduce);
    if (int rc = p.wait()) return rc;
    if (int rc = combine(t.remote_first(), seg, far.data(), n, type, op)) return rc;
  }
  Pending p(t);
  for (int m = lead + 1; m < end; ++m)
    p.isend(elem(recvbuf, g.displs[m], type), g.counts[m], type, t.local_member(m), kTagAllreduce);
  return p.wait();
}

}  // namespace

int allreduce_rabenseifner(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                           MPI_Datatype type, MPI_Op op, int n, std::uint64_t segment_bytes) {
  const GroupedSegments g(count, t.clamp_senders(n), t.local_size);
  const int me = t.local_rank;
  // Where MPI_Reduce_scatter puts an in-place result is easy to get wrong;
  // reducing from a copy keeps every piece at its own displacement.
  TypedBuffer copy;
  if (sendbuf == MPI_IN_PLACE) {
    copy = TypedBuffer(count, type);
    if (int rc = copy_typed(recvbuf, copy.data(), count, type)) return rc;
    sendbuf = copy.data();
  }
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(t,
                           MPI_Ireduce_scatter(sendbuf, elem(recvbuf, g.displs[me], type),
                                               g.counts.data(), type, op, t.local, &r),
                           &r))
    return rc;
  if (!t.standalone())
    if (int rc = exchange_segment(t, g, recvbuf, type, op, segment_bytes)) return rc;
  return wait_native(t,
                     MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, g.counts.data(),
                                     g.displs.data(), type, t.local, &r),
                     &r);
}

}  // namespace zipper::coll
