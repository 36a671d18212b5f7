#include "bcast_vandegeijn.h"

#include "pending.h"
#include "pipeline_segments.h"
#include "segments.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int bcast_vandegeijn(const Topology& t, void* buf, int count, MPI_Datatype type, int root, int n,
                     std::uint64_t segment_bytes) {
  const Segments seg(count, t.clamp_senders(n), t.local_size);
  const int me = t.local_rank;
  void* mine = elem(buf, seg.displs[me], type);
  const PipelineSegments pieces(seg.counts[me], type, segment_bytes);
  Pending p(t);
  if (t.is_local(root)) {
    const int root_local = t.index_in_cluster(root);
    // Native steps wait through wait_native (pending.h): progress meanwhile.
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = wait_native(t,
                             MPI_Iscatterv(buf, seg.counts.data(), seg.displs.data(), type,
                                           me == root_local ? MPI_IN_PLACE : mine, seg.counts[me],
                                           type, root_local, t.local, &r),
                             &r))
      return rc;
    if (seg.counts[me] > 0 && !t.standalone())
      isend_segments(p, mine, type, pieces, t.remote_member(me), kTagBcast);
  } else if (seg.counts[me] > 0) {
    irecv_segments(p, mine, type, pieces, t.remote_member(me), kTagBcast);
  }
  if (!t.is_local(root)) {
    // The segments must be here before the allgather forwards them.
    if (int rc = p.wait()) return rc;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  p.add(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, seg.counts.data(),
                        seg.displs.data(), type, t.local, &req),
        &req);
  return p.wait();
}

}  // namespace zipper::coll
