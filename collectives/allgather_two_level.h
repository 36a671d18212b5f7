#pragma once
#include "topology.h"
namespace zipper::coll {
/// Allgather (MPI arguments; sendbuf may be MPI_IN_PLACE): native allgather
/// into this cluster's part of recvbuf, exchange of the two clusters' parts
/// between their local ranks 0 through zipperd, native bcast of the far part.
/// Algorithm: two-level allgather (thesis / MagPIe).
int allgather_two_level(const Topology& t, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype);
}  // namespace zipper::coll
