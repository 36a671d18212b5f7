#include "typed_buffer.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "../client/datatype.h"

namespace zipper::coll {

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

MPI_Aint reduce_slice_elements(MPI_Datatype type) {
  return std::clamp<MPI_Aint>(kReduceSliceBytes / std::max<MPI_Aint>(1, extent_of(type)), 1,
                              INT_MAX);
}

TypedBuffer::TypedBuffer(MPI_Aint count, MPI_Datatype type) {
  if (count <= 0) return;
  MPI_Aint true_lb = 0, true_extent = 0;
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  storage_.resize(static_cast<std::size_t>(true_extent + (count - 1) * extent_of(type)));
  base_ = storage_.data() - true_lb;
}

int copy_typed(const void* src, void* dst, int count, MPI_Datatype type) {
  return copy_typed(src, count, type, dst, count, type);
}

int copy_typed(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount,
               MPI_Datatype dtype) {
  if (scount == 0 || src == dst) return MPI_SUCCESS;
  client::Layout s, d;
  if (int rc = client::describe(src, scount, stype, &s)) return rc;
  if (int rc = client::describe(dst, dcount, dtype, &d)) return rc;
  if (s.bytes > d.bytes) return MPI_ERR_TRUNCATE;
  if (s.contiguous && d.contiguous) {
    std::memcpy(d.base, s.base, s.bytes);
    return MPI_SUCCESS;
  }
  // A self send-receive lets Open MPI's datatype engine do the (un)packing.
  return MPI_Sendrecv(src, scount, stype, 0, 0, dst, dcount, dtype, 0, 0, MPI_COMM_SELF,
                      MPI_STATUS_IGNORE);
}

}  // namespace zipper::coll
