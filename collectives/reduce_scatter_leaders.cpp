#include "reduce_scatter_leaders.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "pending.h"
#include "reduce_rank_order.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

int reduce_scatter_leaders(const Topology& t, const void* sendbuf, void* recvbuf,
                           const int recvcounts[], MPI_Datatype type, MPI_Op op) {
  // The whole vector may pass INT_MAX elements (each block is an int).
  std::vector<std::int64_t> offset(t.size + 1, 0);
  for (int r = 0; r < t.size; ++r) offset[r + 1] = offset[r] + recvcounts[r];
  const std::int64_t total = offset[t.size];
  const bool leader = t.local_rank == 0;
  TypedBuffer full(leader ? total : 0, type);
  // Every rank knows `total`, so all reduce the same slices in the same order;
  // slices of at most 256 MiB bound the reduction's scratch.
  const std::int64_t kSlice = reduce_slice_elements(type);
  const std::int64_t slices = std::max<std::int64_t>(1, (total + kSlice - 1) / kSlice);
  for (std::int64_t k = 0, at = 0; k < slices; ++k, at += kSlice) {
    const int n = static_cast<int>(std::min(kSlice, total - at));
    if (int rc = reduce_rank_order(t, elem(sendbuf, at, type),
                                   leader ? elem(full.data(), at, type) : nullptr, n, type, op))
      return rc;
  }
  MPI_Request r = MPI_REQUEST_NULL;
  if (total <= INT_MAX) {
    std::vector<int> counts(t.local_size), displs(t.local_size);
    for (int i = 0; i < t.local_size; ++i) {
      counts[i] = recvcounts[t.local_member(i)];
      displs[i] = static_cast<int>(offset[t.local_member(i)]);
    }
    // The native step waits through wait_native (pending.h): progress meanwhile.
    return wait_native(t,
                       MPI_Iscatterv(full.data(), counts.data(), displs.data(), type, recvbuf,
                                     recvcounts[t.rank], type, 0, t.local, &r),
                       &r);
  }
  // Displacements past INT_MAX elements: the leader sends each member its
  // block natively (an int count each) and copies its own.
  Pending p(t);
  if (!leader) {
    if (recvcounts[t.rank] > 0)
      p.add(MPI_Irecv(recvbuf, recvcounts[t.rank], type, 0, kTagReduceScatter, t.local, &r), &r);
    return p.wait();
  }
  for (int i = 1; i < t.local_size; ++i) {
    const int member = t.local_member(i);
    if (recvcounts[member] == 0) continue;
    p.add(MPI_Isend(elem(full.data(), offset[member], type), recvcounts[member], type, i,
                    kTagReduceScatter, t.local, &r),
          &r);
  }
  const int rc =
      copy_typed(elem(full.data(), offset[t.rank], type), recvbuf, recvcounts[t.rank], type);
  const int wrc = p.wait();
  return rc != MPI_SUCCESS ? rc : wrc;
}

}  // namespace zipper::coll
