#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Alltoallw with MPI_IN_PLACE: each block of `recvbuf` meant for another
/// rank is first packed into a snapshot and sent from it as MPI_PACKED
/// (which matches any type signature) while the receives overwrite
/// `recvbuf`; a rank's own block stays where it is. A snapshot block of
/// 2 GiB and more goes as one element of a byte type (byte_type.h).
/// Algorithm: direct (linear) exchange, as alltoallw_direct. Returns an MPI
/// error code.
int alltoallw_in_place(const Topology& t, void* recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[]);
}  // namespace zipper::coll
