#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Reduce_scatter: the whole vector (sum of recvcounts elements, at
/// sendbuf; sendbuf is never MPI_IN_PLACE here) is reduced in rank order at
/// both clusters' leaders (reduce_rank_order.h), and each leader scatters
/// its cluster's blocks natively (rank r gets recvcounts[r] elements at
/// offset recvcounts[0] + ... + recvcounts[r-1]). The vector is reduced in
/// slices of at most 256 MiB (reduce_slice_elements); one past INT_MAX elements is
/// scattered with native sends from the leader (int displacements cannot
/// reach its blocks). Algorithm: reduce then
/// scatter (MPICH's reduce_scatter for non-commutative operations), two-level.
/// Returns an MPI error code.
int reduce_scatter_leaders(const Topology& t, const void* sendbuf, void* recvbuf,
                           const int recvcounts[], MPI_Datatype type, MPI_Op op);
}  // namespace zipper::coll
