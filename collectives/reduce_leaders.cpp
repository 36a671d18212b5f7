#include "reduce_leaders.h"

#include "combine.h"
#include "pending.h"
#include "pipeline_segments.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int reduce_leaders(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, int root, std::uint64_t segment_bytes) {
  const PipelineSegments seg(count, type, segment_bytes);
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    TypedBuffer far;
    if (am_root && !t.standalone()) {
      far = TypedBuffer(count, type);
      irecv_segments(p, far.data(), type, seg, t.remote_member(0), kTagReduce);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Ireduce(sendbuf, recvbuf, count, type, op, t.index_in_cluster(root), t.local, &req),
          &req);
    if (int rc = p.wait()) return rc;
    if (am_root && !t.standalone())
      return combine(t.remote_first(), recvbuf, far.data(), count, type, op);
    return MPI_SUCCESS;
  }
  TypedBuffer partial(t.local_rank == 0 ? count : 0, type);
  for (int k = 0; k < seg.size(); ++k) {
    void* piece = t.local_rank == 0 ? elem(partial.data(), seg.first(k), type) : nullptr;
    // Native steps wait through wait_native (pending.h): progress meanwhile.
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = wait_native(t,
                             MPI_Ireduce(elem(sendbuf, seg.first(k), type), piece, seg.count(k),
                                         type, op, 0, t.local, &r),
                             &r))
      return rc;
    if (t.local_rank == 0) p.isend(piece, seg.count(k), type, root, kTagReduce);
  }
  return p.wait();
}

}  // namespace zipper::coll
