#include "gatherv_two_level.h"

#include <vector>

#include "packed_blocks.h"
#include "pending.h"
#include "tags.h"

namespace zipper::coll {

int gatherv_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root) {
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    std::vector<int> far_ranks, counts, disps;
    std::vector<char> far;
    if (am_root) {
      for (int j = 0; j < t.remote_size; ++j) far_ranks.push_back(t.remote_member(j));
      std::int64_t sum = 0;
      for (int r : far_ranks) sum += packed_size(recvcounts[r], recvtype);
      int bytes = 0;
      if (int rc = int_bytes(sum, &bytes)) return rc;
      far.resize(static_cast<std::size_t>(bytes));
      if (!t.standalone()) p.irecv(far.data(), bytes, MPI_BYTE, t.remote_member(0), kTagGatherv);
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
    return am_root ? unpack_blocks(far, recvbuf, recvcounts, displs, recvtype, far_ranks)
                   : MPI_SUCCESS;
  }
  // Far cluster: its members' sizes are known only to themselves.
  const bool leader = t.local_rank == 0;
  int mine = 0;
  if (int rc = int_bytes(packed_size(sendcount, sendtype), &mine)) return rc;
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
  std::vector<char> packed, block(total);
  const int one = sendcount, zero = 0;
  if (int rc = pack_blocks(sendbuf, &one, &zero, sendtype, {0}, &packed)) return rc;
  if (int rc = wait_native(t,
                           MPI_Igatherv(packed.data(), mine, MPI_BYTE, block.data(), sizes.data(),
                                        offsets.data(), MPI_BYTE, 0, t.local, &r),
                           &r))
    return rc;
  if (!leader) return MPI_SUCCESS;
  p.isend(block.data(), total, MPI_BYTE, root, kTagGatherv);
  return p.wait();
}

}  // namespace zipper::coll
