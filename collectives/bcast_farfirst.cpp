#include "bcast_farfirst.h"

#include "pending.h"
#include "pipeline_segments.h"
#include "tags.h"

namespace zipper::coll {

int bcast_farfirst(const Topology& t, void* buf, int count, MPI_Datatype type, int root,
                   std::uint64_t segment_bytes) {
  const PipelineSegments seg(count, type, segment_bytes);
  Pending p(t);
  if (t.is_local(root)) {
    if (t.rank == root && !t.standalone())
      isend_segments(p, buf, type, seg, t.remote_member(0), kTagBcast);
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Ibcast(buf, count, type, t.index_in_cluster(root), t.local, &req), &req);
    return p.wait();
  }
  std::deque<Pending> arriving;
  if (t.local_rank == 0) arriving = irecv_each_segment(t, buf, type, seg, root, kTagBcast);
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  for (int k = 0; k < seg.size(); ++k) {
    if (t.local_rank == 0)
      if (int rc = arriving[k].wait()) return rc;
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = wait_native(
            t, MPI_Ibcast(elem(buf, seg.first(k), type), seg.count(k), type, 0, t.local, &r), &r))
      return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace zipper::coll
