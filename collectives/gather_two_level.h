#pragma once
#include "topology.h"
namespace zipper::coll {
/// Gather to virtual rank `root` (MPI arguments; sendbuf may be MPI_IN_PLACE
/// at the root): the root's cluster gathers natively straight into the
/// root's buffer while the far cluster gathers to its local rank 0, which
/// sends the whole far block to the root in one message through zipperd.
/// Algorithm: two-level gather (thesis / MagPIe).
int gather_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
}  // namespace zipper::coll
