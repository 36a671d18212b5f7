#include "scatter_two_level.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int scatter_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    if (am_root && !t.standalone())
      p.isend(elem(sendbuf, MPI_Aint{t.remote_offset} * sendcount, sendtype),
              t.remote_size * sendcount, sendtype, t.remote_offset, kTagScatter);
    const void* mine = am_root ? elem(sendbuf, MPI_Aint{t.offset} * sendcount, sendtype) : nullptr;
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Iscatter(mine, sendcount, sendtype, recvbuf, recvcount, recvtype, root - t.offset,
                       t.local, &req),
          &req);
    return p.wait();
  }
  const bool leader = t.local_rank == 0;
  TypedBuffer block(leader ? MPI_Aint{t.local_size} * recvcount : 0, recvtype);
  if (leader) {
    p.irecv(block.data(), t.local_size * recvcount, recvtype, root, kTagScatter);
    if (int rc = p.wait()) return rc;
  }
  return MPI_Scatter(block.data(), recvcount, recvtype, recvbuf, recvcount, recvtype, 0, t.local);
}

}  // namespace zipper::coll
