#include "scatter_two_level.h"

#include <optional>

#include "member_blocks.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"
#include "uniform_blocks.h"

namespace zipper::coll {

int scatter_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  // The blocks that cross, past INT_MAX elements too; built only where the
  // count and type are significant, and declared before `p` so that the type
  // outlives its wait.
  std::optional<UniformBlocks> ub;
  if (t.rank == root)
    ub.emplace(t.remote_size, sendcount, sendtype);
  else if (!t.is_local(root) && t.local_rank == 0)
    ub.emplace(t.local_size, recvcount, recvtype);
  if (ub && ub->status()) return ub->status();
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    // Only read at the root: the blocks are staged, never written back.
    void* in = am_root ? const_cast<void*>(sendbuf) : nullptr;
    MemberBlocks near(t, true, in, sendcount, sendtype);
    MemberBlocks far(t, false, in, sendcount, sendtype);
    if (int rc = near.stage()) return rc;
    if (int rc = far.stage()) return rc;
    if (am_root && !t.standalone())
      p.isend(far.data(), ub->elements(t.remote_size), ub->unit(), t.remote_member(0), kTagScatter);
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Iscatter(near.data(), sendcount, sendtype, recvbuf, recvcount, recvtype,
                       t.index_in_cluster(root), t.local, &req),
          &req);
    return p.wait();
  }
  const bool leader = t.local_rank == 0;
  TypedBuffer block(leader ? MPI_Aint{t.local_size} * recvcount : 0, recvtype);
  if (leader) {
    p.irecv(block.data(), ub->elements(t.local_size), ub->unit(), root, kTagScatter);
    if (int rc = p.wait()) return rc;
  }
  // The native step waits through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  return wait_native(
      t,
      MPI_Iscatter(block.data(), recvcount, recvtype, recvbuf, recvcount, recvtype, 0, t.local, &r),
      &r);
}

}  // namespace zipper::coll
