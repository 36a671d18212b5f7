#include "gatherv_two_level.h"

#include <climits>
#include <vector>

#include "packed_blocks.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int gatherv_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root) {
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    std::vector<int> far_ranks, counts, disps;
    std::vector<char> far;
    bool packed_far = false;  // far blocks come packed from the far leader
    if (am_root) {
      for (int j = 0; j < t.remote_size; ++j) far_ranks.push_back(t.remote_member(j));
      std::int64_t sum = 0;
      for (int r : far_ranks) sum += packed_size(recvcounts[r], recvtype);
      if (sum > INT_MAX) {
        // The far cluster's blocks total 2 GiB or more: each far rank sends
        // its own straight to the root (the far side takes the same
        // decision from the same sum), received in place.
        for (int r : far_ranks)
          if (packed_size(recvcounts[r], recvtype) > 0)
            p.irecv(elem(recvbuf, displs[r], recvtype), recvcounts[r], recvtype, r, kTagGatherv);
      } else {
        packed_far = true;
        far.resize(static_cast<std::size_t>(sum));
        if (!t.standalone())
          p.irecv(far.data(), static_cast<int>(sum), MPI_BYTE, t.remote_member(0), kTagGatherv);
      }
      for (int i = 0; i < t.local_size; ++i) {
        counts.push_back(recvcounts[t.local_member(i)]);
        disps.push_back(displs[t.local_member(i)]);
      }
    }
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, counts.data(), disps.data(), recvtype,
                       t.index_in_cluster(root), t.local, &req),
          &req);
    if (int rc = p.wait()) return rc;
    return packed_far ? unpack_blocks(far, recvbuf, recvcounts, displs, recvtype, far_ranks)
                      : MPI_SUCCESS;
  }
  // Far cluster: its members' sizes are known only to themselves; all of
  // them learn the sum, which decides the path.
  const bool leader = t.local_rank == 0;
  const std::int64_t mine = packed_size(sendcount, sendtype);
  ClusterBlocks cb;
  if (int rc = cluster_blocks(t, mine, &cb)) return rc;
  if (cb.sum > INT_MAX) {
    if (mine > 0) p.isend(sendbuf, sendcount, sendtype, root, kTagGatherv);
    return p.wait();
  }
  const int total = static_cast<int>(cb.sum);
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  std::vector<char> packed, block(leader ? total : 0);
  const int one = sendcount, zero = 0;
  if (int rc = pack_blocks(sendbuf, &one, &zero, sendtype, {0}, &packed)) return rc;
  if (int rc =
          wait_native(t,
                      MPI_Igatherv(packed.data(), static_cast<int>(mine), MPI_BYTE, block.data(),
                                   cb.counts.data(), cb.offsets.data(), MPI_BYTE, 0, t.local, &r),
                      &r))
    return rc;
  if (!leader) return MPI_SUCCESS;
  p.isend(block.data(), total, MPI_BYTE, root, kTagGatherv);
  return p.wait();
}

}  // namespace zipper::coll
