#include "allgather_two_level.h"

#include "member_blocks.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int allgather_two_level(const Topology& t, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype) {
  MemberBlocks ours(t, true, recvbuf, recvcount, recvtype);
  if (int rc = ours.stage()) return rc;  // this rank's own block, for MPI_IN_PLACE
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(t,
                           MPI_Iallgather(sendbuf, sendcount, sendtype, ours.data(), recvcount,
                                          recvtype, t.local, &r),
                           &r))
    return rc;
  if (int rc = ours.unstage()) return rc;
  if (t.standalone()) return MPI_SUCCESS;
  MemberBlocks theirs(t, false, recvbuf, recvcount, recvtype);
  if (t.local_rank == 0) {
    Pending p(t);
    p.irecv(theirs.data(), t.remote_size * recvcount, recvtype, t.remote_member(0), kTagAllgather);
    p.isend(ours.data(), t.local_size * recvcount, recvtype, t.remote_member(0), kTagAllgather);
    if (int rc = p.wait()) return rc;
  }
  if (int rc = wait_native(
          t, MPI_Ibcast(theirs.data(), t.remote_size * recvcount, recvtype, 0, t.local, &r), &r))
    return rc;
  return theirs.unstage();
}

}  // namespace zipper::coll
