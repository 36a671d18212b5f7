// Combining the two clusters' partial reductions. MPI orders a reduction by
// rank; every low-group rank precedes every high-group rank, so the result is
// always low (op) high, which also holds for non-commutative user operations.
// Operations run here, in the application's processes, never in zipperd.
#pragma once

#include <mpi.h>

namespace zipper::coll {

/// high_inout = low (op) high_inout. Returns an MPI error code.
int combine_into_high(const void* low, void* high_inout, int count, MPI_Datatype type, MPI_Op op);
/// low_inout = low_inout (op) high. Needs a scratch copy for non-commutative
/// operations. Returns an MPI error code.
int combine_into_low(void* low_inout, const void* high, int count, MPI_Datatype type, MPI_Op op);
/// Combines this cluster's partial `mine` with the other cluster's partial
/// `theirs` into `mine`, in low-then-high order.
int combine(bool i_am_high, void* mine, const void* theirs, int count, MPI_Datatype type,
            MPI_Op op);

}  // namespace zipper::coll
