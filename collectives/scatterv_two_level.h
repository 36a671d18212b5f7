#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Scatterv from rank `root` (sendcounts, displs, sendtype significant at
/// the root only; recvbuf may be MPI_IN_PLACE at the root). The root packs
/// the far cluster's blocks into one message to the far leader, which
/// scatters them natively; the far members learn each other's sizes (native
/// allgather of one int64 each). When the far blocks total 2 GiB or more,
/// the root sends each far rank its block straight from its buffer instead
/// (both sides decide from the same sum). The root's cluster scatters
/// natively (MPI_Iscatterv) meanwhile. Algorithm: two-level scatter (MagPIe,
/// Kielmann et al. 1999 §3), as scatter_two_level.h. Returns an MPI error code.
int scatterv_two_level(const Topology& t, const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root);
}  // namespace zipper::coll
