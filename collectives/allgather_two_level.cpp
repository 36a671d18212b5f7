#include "allgather_two_level.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int allgather_two_level(const Topology& t, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype) {
  void* ours = elem(recvbuf, MPI_Aint{t.offset} * recvcount, recvtype);
  if (int rc = MPI_Allgather(sendbuf, sendcount, sendtype, ours, recvcount, recvtype, t.local))
    return rc;
  if (t.standalone()) return MPI_SUCCESS;
  void* theirs = elem(recvbuf, MPI_Aint{t.remote_offset} * recvcount, recvtype);
  if (t.local_rank == 0) {
    Pending p(t);
    p.irecv(theirs, t.remote_size * recvcount, recvtype, t.remote_offset, kTagAllgather);
    p.isend(ours, t.local_size * recvcount, recvtype, t.remote_offset, kTagAllgather);
    if (int rc = p.wait()) return rc;
  }
  return MPI_Bcast(theirs, t.remote_size * recvcount, recvtype, 0, t.local);
}

}  // namespace zipper::coll
