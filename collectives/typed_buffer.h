// Helpers for (buffer, count, datatype) triples inside the collectives:
// element offsets, scratch buffers laid out like user buffers, typed copies.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace zipper::coll {

/// Extent of `type` (bytes).
MPI_Aint extent_of(MPI_Datatype type);

/// Bytes of one slice where a reduction goes in slices, one after another:
/// its scratch is a slice or two whatever the vector (256 MiB).
inline constexpr MPI_Aint kReduceSliceBytes = MPI_Aint{1} << 28;
/// Elements of `type` per such slice: kReduceSliceBytes / extent, at least 1
/// and at most INT_MAX (a count MPI's calls take).
MPI_Aint reduce_slice_elements(MPI_Datatype type);

/// Address of element `index` of an array of `type` starting at `buf`.
inline void* elem(void* buf, MPI_Aint index, MPI_Datatype type) {
  return static_cast<char*>(buf) + index * extent_of(type);
}
inline const void* elem(const void* buf, MPI_Aint index, MPI_Datatype type) {
  return static_cast<const char*>(buf) + index * extent_of(type);
}

/// Scratch space for `count` elements of `type`, addressed like a user
/// buffer (data() accounts for a non-zero true lower bound).
class TypedBuffer {
 public:
  TypedBuffer() = default;
  TypedBuffer(MPI_Aint count, MPI_Datatype type);
  void* data() { return base_; }
  bool empty() const { return storage_.empty(); }

 private:
  std::vector<std::byte> storage_;
  void* base_ = nullptr;
};

/// Copies `count` elements of `type` from `src` to `dst` (buffers must not
/// overlap). Returns an MPI error code.
int copy_typed(const void* src, void* dst, int count, MPI_Datatype type);
/// The same with different send and receive type signatures that match.
int copy_typed(const void* src, int scount, MPI_Datatype stype, void* dst, int dcount,
               MPI_Datatype dtype);

}  // namespace zipper::coll
