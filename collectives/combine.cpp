#include "combine.h"

#include "typed_buffer.h"

namespace zipper::coll {

int combine_into_high(const void* low, void* high_inout, int count, MPI_Datatype type, MPI_Op op) {
  if (count == 0) return MPI_SUCCESS;
  // MPI_Reduce_local(in, inout) computes inout = in (op) inout.
  return MPI_Reduce_local(low, high_inout, count, type, op);
}

int combine_into_low(void* low_inout, const void* high, int count, MPI_Datatype type, MPI_Op op) {
  if (count == 0) return MPI_SUCCESS;
  int commute = 0;
  MPI_Op_commutative(op, &commute);
  if (commute) return MPI_Reduce_local(high, low_inout, count, type, op);
  TypedBuffer tmp(count, type);
  if (int rc = copy_typed(high, tmp.data(), count, type)) return rc;
  if (int rc = MPI_Reduce_local(low_inout, tmp.data(), count, type, op)) return rc;
  return copy_typed(tmp.data(), low_inout, count, type);
}

int combine(bool i_am_high, void* mine, const void* theirs, int count, MPI_Datatype type,
            MPI_Op op) {
  return i_am_high ? combine_into_high(theirs, mine, count, type, op)
                   : combine_into_low(mine, theirs, count, type, op);
}

}  // namespace zipper::coll
