#include "allreduce_two_tier.h"

#include "combine.h"
#include "pending.h"
#include "pipeline_segments.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int allreduce_two_tier(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, std::uint64_t segment_bytes) {
  const bool leader = t.local_rank == 0;
  // Native MPI_Reduce allows MPI_IN_PLACE only at its root.
  const void* in = sendbuf;
  if (sendbuf == MPI_IN_PLACE && !leader) in = recvbuf;
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(
          t, MPI_Ireduce(in, leader ? recvbuf : nullptr, count, type, op, 0, t.local, &r), &r))
    return rc;
  if (leader && !t.standalone()) {
    TypedBuffer far(count, type);
    Pending p(t);
    const PipelineSegments seg(count, type, segment_bytes);
    irecv_segments(p, far.data(), type, seg, t.remote_member(0), kTagAllreduce);
    isend_segments(p, recvbuf, type, seg, t.remote_member(0), kTagAllreduce);
    if (int rc = p.wait()) return rc;
    if (int rc = combine(t.remote_first(), recvbuf, far.data(), count, type, op)) return rc;
  }
  return wait_native(t, MPI_Ibcast(recvbuf, count, type, 0, t.local, &r), &r);
}

}  // namespace zipper::coll
