#pragma once
#include "schedule.h"
namespace zipper::coll {
/// Non-blocking reduction of `count` elements at `sendbuf` (never
/// MPI_IN_PLACE here) into `recvbuf` at `root`: a binomial tree over ranks in
/// rank order to rank 0, where each rank combines its partial (ranks
/// [r, r + 2^k)) with the next one's on the right, so the result is in rank
/// order for non-commutative operations and any layout; rank 0 then sends
/// it to the root. Algorithm: binomial reduce (Thakur et al. 2005 §4.4,
/// MPICH's order for non-commutative operations). The vector may pass
/// INT_MAX elements: it goes in slices of at most 256 MiB
/// (reduce_slice_elements), one after another through the same two
/// scratch buffers.
void nbc_reduce_binomial(Schedule& s, const void* sendbuf, void* recvbuf, MPI_Aint count,
                         MPI_Datatype type, MPI_Op op, int root);
}  // namespace zipper::coll
