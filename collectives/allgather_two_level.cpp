#include "allgather_two_level.h"

#include <climits>

#include "../client/datatype.h"
#include "member_blocks.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"
#include "uniform_blocks.h"

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
    // Past INT_MAX elements too (UniformBlocks).
    const UniformBlocks in(t.remote_size, recvcount, recvtype),
        out(t.local_size, recvcount, recvtype);
    if (int rc = in.status() ? in.status() : out.status()) return rc;
    Pending p(t);
    p.irecv(theirs.data(), in.elements(t.remote_size), in.unit(), t.remote_member(0),
            kTagAllgather);
    p.isend(ours.data(), out.elements(t.local_size), out.unit(), t.remote_member(0), kTagAllgather);
    if (int rc = p.wait()) return rc;
  }
  // One native broadcast, or one per far rank's block where the far blocks
  // pass INT_MAX bytes (decided by bytes, the same on every rank whatever its
  // recvtype).
  const MPI_Count bytes = MPI_Count{t.remote_size} * recvcount * client::type_size(recvtype);
  if (bytes <= INT_MAX && MPI_Count{t.remote_size} * recvcount <= INT_MAX) {
    if (int rc = wait_native(
            t, MPI_Ibcast(theirs.data(), t.remote_size * recvcount, recvtype, 0, t.local, &r), &r))
      return rc;
  } else {
    Pending p(t);
    for (int j = 0; j < t.remote_size; ++j) {
      p.add(MPI_Ibcast(elem(theirs.data(), MPI_Aint{j} * recvcount, recvtype), recvcount, recvtype,
                       0, t.local, &r),
            &r);
    }
    if (int rc = p.wait()) return rc;
  }
  return theirs.unstage();
}

}  // namespace zipper::coll
