#include "alltoallw_in_place.h"

#include <deque>
#include <vector>

#include "byte_type.h"
#include "packed_blocks.h"
#include "pending.h"
#include "tags.h"

namespace zipper::coll {

int alltoallw_in_place(const Topology& t, void* recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[]) {
  auto* out = static_cast<char*>(recvbuf);
  std::vector<char> packed;
  std::vector<std::size_t> at(t.size + 1, 0);
  for (int r = 0; r < t.size; ++r) {
    const int one = recvcounts[r], zero = 0;
    if (r != t.rank)
      if (int rc = pack_blocks(out + rdispls[r], &one, &zero, recvtypes[r], {0}, &packed))
        return rc;
    at[r + 1] = packed.size();
  }
  std::deque<ByteType> types;  // outlive `p`, which waits on destruction
  for (int r = 0; r < t.size; ++r) {
    types.emplace_back(static_cast<MPI_Count>(at[r + 1] - at[r]), MPI_PACKED);
    if (int rc = types.back().status()) return rc;
  }
  Pending p(t);
  // As alltoallw_direct: receives first, then sends, starting at rank+1.
  for (int k = 1; k < t.size; ++k) {
    const int r = (t.rank + t.size - k) % t.size;
    if (p.irecv(out + rdispls[r], recvcounts[r], recvtypes[r], r, kTagAlltoallw)) return p.wait();
  }
  for (int k = 1; k < t.size; ++k) {
    const int r = (t.rank + k) % t.size;
    if (p.isend(packed.data() + at[r], types[r].count(), types[r].type(), r, kTagAlltoallw))
      return p.wait();
  }
  return p.wait();
}

}  // namespace zipper::coll
