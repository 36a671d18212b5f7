#include "scatterv_two_level.h"

#include <vector>

#include "packed_blocks.h"
#include "pending.h"
#include "tags.h"

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
      if (int rc = pack_blocks(sendbuf, sendcounts, displs, sendtype, far_ranks, &far)) return rc;
      int far_bytes = 0;
      if (int rc = int_bytes(static_cast<std::int64_t>(far.size()), &far_bytes)) return rc;
      if (!t.standalone())
        p.isend(far.data(), far_bytes, MPI_BYTE, t.remote_member(0), kTagScatterv);
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
  const bool leader = t.local_rank == 0;
  int mine = 0;
  if (int rc = int_bytes(packed_size(recvcount, recvtype), &mine)) return rc;
  std::vector<int> sizes(leader ? t.local_size : 0), offsets(sizes.size());
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(
          t, MPI_Igather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, t.local, &r), &r))
    return rc;
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    offsets[i] = static_cast<int>(sum);
    sum += sizes[i];
  }
  int total = 0;
  if (int rc = int_bytes(sum, &total)) return rc;
  std::vector<char> block(total), packed(mine);
  if (leader) {
    p.irecv(block.data(), total, MPI_BYTE, root, kTagScatterv);
    if (int rc = p.wait()) return rc;
  }
  if (int rc = wait_native(t,
                           MPI_Iscatterv(block.data(), sizes.data(), offsets.data(), MPI_BYTE,
                                         packed.data(), mine, MPI_BYTE, 0, t.local, &r),
                           &r))
    return rc;
  const int one = recvcount, zero = 0;
  return unpack_blocks(packed, recvbuf, &one, &zero, recvtype, {0});
}

}  // namespace zipper::coll
