#pragma once
#include "topology.h"
namespace zipper::coll {
/// Scatter from virtual rank `root` (MPI arguments; recvbuf may be
/// MPI_IN_PLACE at the root): the root sends the far cluster's whole block
/// to that cluster's local rank 0 through zipperd, overlapped with its own
/// cluster's native scatter; the far leader then scatters natively.
/// Algorithm: two-level scatter (thesis / MagPIe).
int scatter_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
}  // namespace zipper::coll
