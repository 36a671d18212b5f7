#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Gatherv to rank `root` (recvcounts, displs, recvtype significant at
/// the root only; sendbuf may be MPI_IN_PLACE at the root). The root's
/// cluster gathers natively (MPI_Igatherv) straight into the root's buffer;
/// the far cluster's members learn each other's sizes (native allgather of
/// one int64 each); its leader gathers their packed blocks natively and sends
/// them to the root as one message through zipperd, which the root unpacks
/// into place. When the far blocks total 2 GiB or more (beyond an int count
/// of bytes), each far rank instead sends its block straight to the root,
/// which receives it in place (both sides decide from the same sum).
/// Algorithm: two-level gather (MagPIe, Kielmann et al. 1999 §3), as
/// gather_two_level.h. Returns an MPI error code.
int gatherv_two_level(const Topology& t, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root);
}  // namespace zipper::coll
