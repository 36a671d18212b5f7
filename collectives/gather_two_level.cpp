#include "gather_two_level.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int gather_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  Pending p(t);
  if (t.is_local(root)) {
    const bool am_root = t.rank == root;
    if (am_root && !t.standalone())
      p.irecv(elem(recvbuf, MPI_Aint{t.remote_offset} * recvcount, recvtype),
              t.remote_size * recvcount, recvtype, t.remote_offset, kTagGather);
    void* mine = am_root ? elem(recvbuf, MPI_Aint{t.offset} * recvcount, recvtype) : nullptr;
    MPI_Request req = MPI_REQUEST_NULL;
    p.add(MPI_Igather(sendbuf, sendcount, sendtype, mine, recvcount, recvtype, root - t.offset,
                      t.local, &req),
          &req);
    return p.wait();
  }
  // The far leader collects with its own send signature, which MPI requires
  // to match the root's receive signature.
  const bool leader = t.local_rank == 0;
  TypedBuffer block(leader ? MPI_Aint{t.local_size} * sendcount : 0, sendtype);
  if (int rc =
          MPI_Gather(sendbuf, sendcount, sendtype, block.data(), sendcount, sendtype, 0, t.local))
    return rc;
  if (!leader) return MPI_SUCCESS;
  p.isend(block.data(), t.local_size * sendcount, sendtype, root, kTagGather);
  return p.wait();
}

}  // namespace zipper::coll
