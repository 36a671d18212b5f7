#include "scatterv_two_level.h"

#include <climits>
#include <vector>

#include "packed_blocks.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int scatterv_two_level(const Topology& t, const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root) {
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    std::vector<int> far_ranks, counts, disps;
    std::vector<char> far;
    if (am_root) {
      for (int j = 0; j < t.remote_size; ++j) far_ranks.push_back(t.remote_member(j));
      std::int64_t sum = 0;
      for (int r : far_ranks) sum += packed_size(sendcounts[r], sendtype);
      if (sum > INT_MAX) {
        // The far cluster's blocks total 2 GiB or more: straight to each far
        // rank from the user's buffer (the far side decides alike from the
        // same sum).
        for (int r : far_ranks)
          if (packed_size(sendcounts[r], sendtype) > 0)
            p.isend(elem(sendbuf, displs[r], sendtype), sendcounts[r], sendtype, r, kTagScatterv);
      } else {
        if (int rc = pack_blocks(sendbuf, sendcounts, displs, sendtype, far_ranks, &far)) return rc;
        if (!t.standalone())
          p.isend(far.data(), static_cast<int>(sum), MPI_BYTE, t.remote_member(0), kTagScatterv);
      }
      for (int i = 0; i < t.local_size; ++i) {
        counts.push_back(sendcounts[t.local_member(i)]);
        disps.push_back(displs[t.local_member(i)]);
      }
    }
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Iscatterv(sendbuf, counts.data(), disps.data(), sendtype, recvbuf, recvcount,
                        recvtype, t.index_in_cluster(root), t.local, &req),
          &req);
    return p.wait();
  }
  // Far cluster: all members learn the sum of their sizes, which decides the path.
  const bool leader = t.local_rank == 0;
  const std::int64_t mine = packed_size(recvcount, recvtype);
  ClusterBlocks cb;
  if (int rc = cluster_blocks(t, mine, &cb)) return rc;
  if (cb.sum > INT_MAX) {
    if (mine > 0) p.irecv(recvbuf, recvcount, recvtype, root, kTagScatterv);
    return p.wait();
  }
  const int total = static_cast<int>(cb.sum);
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  std::vector<char> block(leader ? total : 0), packed(static_cast<std::size_t>(mine));
  if (leader) {
    p.irecv(block.data(), total, MPI_BYTE, root, kTagScatterv);
    if (int rc = p.wait()) return rc;
  }
  if (int rc = wait_native(
          t,
          MPI_Iscatterv(block.data(), cb.counts.data(), cb.offsets.data(), MPI_BYTE, packed.data(),
                        static_cast<int>(mine), MPI_BYTE, 0, t.local, &r),
          &r))
    return rc;
  const int one = recvcount, zero = 0;
  return unpack_blocks(packed, recvbuf, &one, &zero, recvtype, {0});
}

}  // namespace zipper::coll
