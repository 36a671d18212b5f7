#include "allgatherv_two_level.h"

#include <vector>

#include "packed_blocks.h"
#include "pending.h"
#include "tags.h"

namespace zipper::coll {

int allgatherv_two_level(const Topology& t, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                         const int displs[], MPI_Datatype recvtype) {
  std::vector<int> mine, theirs, counts, disps;
  for (int i = 0; i < t.local_size; ++i) {
    mine.push_back(t.local_member(i));
    counts.push_back(recvcounts[mine.back()]);
    disps.push_back(displs[mine.back()]);
  }
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request req = MPI_REQUEST_NULL;
  if (int rc = wait_native(t,
                           MPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, counts.data(),
                                           disps.data(), recvtype, t.local, &req),
                           &req))
    return rc;
  if (t.standalone()) return MPI_SUCCESS;
  for (int j = 0; j < t.remote_size; ++j) theirs.push_back(t.remote_member(j));
  std::int64_t sum = 0, mine_sum = 0;
  for (int r : theirs) sum += packed_size(recvcounts[r], recvtype);
  for (int r : mine) mine_sum += packed_size(recvcounts[r], recvtype);
  int bytes = 0, out_bytes = 0;
  if (int rc = int_bytes(sum, &bytes)) return rc;
  if (int rc = int_bytes(mine_sum, &out_bytes)) return rc;
  std::vector<char> in(static_cast<std::size_t>(bytes)), out;
  if (t.local_rank == 0) {
    if (int rc = pack_blocks(recvbuf, recvcounts, displs, recvtype, mine, &out)) return rc;
    Pending p(t);
    p.irecv(in.data(), bytes, MPI_BYTE, t.remote_member(0), kTagAllgatherv);
    p.isend(out.data(), out_bytes, MPI_BYTE, t.remote_member(0), kTagAllgatherv);
    if (int rc = p.wait()) return rc;
  }
  if (int rc = wait_native(t, MPI_Ibcast(in.data(), bytes, MPI_BYTE, 0, t.local, &req), &req))
    return rc;
  return unpack_blocks(in, recvbuf, recvcounts, displs, recvtype, theirs);
}

}  // namespace zipper::coll
