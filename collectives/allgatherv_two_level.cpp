#include "allgatherv_two_level.h"

#include <algorithm>
#include <vector>

#include "byte_type.h"
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
  std::vector<char> in(static_cast<std::size_t>(sum)), out;
  if (t.local_rank == 0) {
    if (int rc = pack_blocks(recvbuf, recvcounts, displs, recvtype, mine, &out)) return rc;
    // One message each way at any size (ByteType: 2 GiB and more as one element).
    const ByteType in_type(sum, MPI_BYTE), out_type(mine_sum, MPI_BYTE);
    if (int rc = in_type.status() ? in_type.status() : out_type.status()) return rc;
    Pending p(t);
    p.irecv(in.data(), in_type.count(), in_type.type(), t.remote_member(0), kTagAllgatherv);
    p.isend(out.data(), out_type.count(), out_type.type(), t.remote_member(0), kTagAllgatherv);
    if (int rc = p.wait()) return rc;
  }
  // Native broadcasts of at most kBytePiece each (every rank knows `sum`, so
  // all make the same calls), outstanding together.
  Pending p(t);
  for (std::int64_t at = 0; at < sum; at += kBytePiece) {
    const int n = static_cast<int>(std::min<std::int64_t>(kBytePiece, sum - at));
    p.add(MPI_Ibcast(in.data() + at, n, MPI_BYTE, 0, t.local, &req), &req);
  }
  if (int rc = p.wait()) return rc;
  return unpack_blocks(in, recvbuf, recvcounts, displs, recvtype, theirs);
}

}  // namespace zipper::coll
