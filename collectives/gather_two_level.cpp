#include "gather_two_level.h"

#include "member_blocks.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"
#include "uniform_blocks.h"

namespace zipper::coll {

int gather_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    MemberBlocks near(t, true, am_root ? recvbuf : nullptr, recvcount, recvtype);
    MemberBlocks far(t, false, am_root ? recvbuf : nullptr, recvcount, recvtype);
    if (int rc = near.stage()) return rc;  // the root's own block, for MPI_IN_PLACE
    {
      // Past INT_MAX elements too; recvcount and recvtype mean something at the root only.
      const UniformBlocks fb(t.remote_size, am_root ? recvcount : 0, recvtype);
      if (int rc = fb.status()) return rc;
      Pending p(t);
      if (am_root && !t.standalone())
        p.irecv(far.data(), fb.elements(t.remote_size), fb.unit(), t.remote_member(0), kTagGather);
      MPI_Request req = MPI_REQUEST_NULL;
      p.add(MPI_Igather(sendbuf, sendcount, sendtype, near.data(), recvcount, recvtype,
                        t.index_in_cluster(root), t.local, &req),
            &req);
      if (int rc = p.wait()) return rc;
    }
    if (int rc = near.unstage()) return rc;
    return far.unstage();
  }
  // The far leader collects with its own send signature, which MPI requires
  // to match the root's receive signature.
  const UniformBlocks lb(t.local_size, sendcount, sendtype);  // past INT_MAX elements too
  if (int rc = lb.status()) return rc;
  Pending p(t);
  const bool leader = t.local_rank == 0;
  TypedBuffer block(leader ? MPI_Aint{t.local_size} * sendcount : 0, sendtype);
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(t,
                           MPI_Igather(sendbuf, sendcount, sendtype, block.data(), sendcount,
                                       sendtype, 0, t.local, &r),
                           &r))
    return rc;
  if (!leader) return MPI_SUCCESS;
  p.isend(block.data(), lb.elements(t.local_size), lb.unit(), root, kTagGather);
  return p.wait();
}

}  // namespace zipper::coll
