#include "reduce_scatter_leaders.h"

#include <vector>

#include "pending.h"
#include "reduce_rank_order.h"
#include "typed_buffer.h"

namespace zipper::coll {

int reduce_scatter_leaders(const Topology& t, const void* sendbuf, void* recvbuf,
                           const int recvcounts[], MPI_Datatype type, MPI_Op op) {
  std::vector<int> offset(t.size + 1, 0);
  for (int r = 0; r < t.size; ++r) offset[r + 1] = offset[r] + recvcounts[r];
  const int total = offset[t.size];
  const bool leader = t.local_rank == 0;
  TypedBuffer full(leader ? total : 0, type);
  if (int rc = reduce_rank_order(t, sendbuf, full.data(), total, type, op)) return rc;
  std::vector<int> counts(t.local_size), displs(t.local_size);
  for (int i = 0; i < t.local_size; ++i) {
    counts[i] = recvcounts[t.local_member(i)];
    displs[i] = offset[t.local_member(i)];
  }
  // The native step waits through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  return wait_native(t,
                     MPI_Iscatterv(full.data(), counts.data(), displs.data(), type, recvbuf,
                                   recvcounts[t.rank], type, 0, t.local, &r),
                     &r);
}

}  // namespace zipper::coll
