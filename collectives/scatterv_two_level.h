#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Scatterv from rank `root` (sendcounts, displs, sendtype significant at
/// the root only; recvbuf may be MPI_IN_PLACE at the root). The root packs
/// the far cluster's blocks into one message to the far leader, which
/// learns its members' sizes (native gather of one int each) and scatters
/// the packed blocks natively; the root's cluster scatters natively
/// (MPI_Iscatterv) meanwhile. Algorithm: two-level scatter (MagPIe,
/// Kielmann et al. 1999 §3), as scatter_two_level.h. Returns an MPI error code.
int scatterv_two_level(const Topology& t, const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root);
}  // namespace zipper::coll
