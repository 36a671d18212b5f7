#include "alltoallv_direct.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int alltoallv_direct(const Topology& t, const void* sendbuf, const int* sendcounts,
                     const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                     const int* recvcounts, const int* rdispls, MPI_Datatype recvtype) {
  // This cluster's members' entries, alive until the native exchange completes.
  const auto sc = t.local_slice(sendcounts), sd = t.local_slice(sdispls);
  const auto rc = t.local_slice(recvcounts), rd = t.local_slice(rdispls);
  Pending p(t);
  MPI_Request req = MPI_REQUEST_NULL;
  p.add(MPI_Ialltoallv(sendbuf, sc.data(), sd.data(), sendtype, recvbuf, rc.data(), rd.data(),
                       recvtype, t.local, &req),
        &req);
  // Rotating the start spreads the first messages over all remote ranks.
  for (int k = 0; k < t.remote_size; ++k) {
    const int h = t.remote_member((t.local_rank + k) % t.remote_size);
    p.irecv(elem(recvbuf, rdispls[h], recvtype), recvcounts[h], recvtype, h, kTagAlltoall);
  }
  for (int k = 0; k < t.remote_size; ++k) {
    const int h = t.remote_member((t.local_rank + k) % t.remote_size);
    p.isend(elem(sendbuf, sdispls[h], sendtype), sendcounts[h], sendtype, h, kTagAlltoall);
  }
  return p.wait();
}

}  // namespace zipper::coll
