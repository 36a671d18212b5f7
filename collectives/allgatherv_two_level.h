#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Allgatherv (sendbuf may be MPI_IN_PLACE: each rank's block is already
/// at recvbuf + displs[rank]). Each cluster allgathers natively into
/// recvbuf; the two leaders swap their clusters' blocks packed into one
/// message each way (of any size: byte_type.h); each leader broadcasts the
/// other cluster's packed blocks natively, in broadcasts of at most 1 GiB,
/// and every rank unpacks them into place. Algorithm:
/// two-level allgather (MagPIe, Kielmann et al. 1999 §3), as
/// allgather_two_level.h. Returns an MPI error code.
int allgatherv_two_level(const Topology& t, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                         const int displs[], MPI_Datatype recvtype);
}  // namespace zipper::coll
