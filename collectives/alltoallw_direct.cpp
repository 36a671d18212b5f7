#include "alltoallw_direct.h"

#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int alltoallw_direct(const Topology& t, const void* sendbuf, const int sendcounts[],
                     const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                     const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[]) {
  const auto* in = static_cast<const char*>(sendbuf);
  auto* out = static_cast<char*>(recvbuf);
  Pending p(t);
  // Receives first, so that no message waits unexpected; start at rank+1 so
  // that not every rank sends to rank 0 first.
  for (int k = 1; k < t.size; ++k) {
    const int r = (t.rank + t.size - k) % t.size;
    if (p.irecv(out + rdispls[r], recvcounts[r], recvtypes[r], r, kTagAlltoallw)) return p.wait();
  }
  for (int k = 1; k < t.size; ++k) {
    const int r = (t.rank + k) % t.size;
    if (p.isend(in + sdispls[r], sendcounts[r], sendtypes[r], r, kTagAlltoallw)) return p.wait();
  }
  const int me = t.rank;
  const int rc = copy_typed(in + sdispls[me], sendcounts[me], sendtypes[me], out + rdispls[me],
                            recvcounts[me], recvtypes[me]);
  const int wrc = p.wait();
  return rc != MPI_SUCCESS ? rc : wrc;
}

}  // namespace zipper::coll
