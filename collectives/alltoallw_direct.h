#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Alltoallw (displacements in bytes, one datatype per peer; sendbuf is
/// never MPI_IN_PLACE here): every rank posts a receive from and a send to
/// every other rank at once, through zipperd for the far cluster and
/// natively for its own, and copies its own block locally. Algorithm:
/// direct (linear) exchange, as MPICH's alltoallw for blocking calls
/// (Thakur et al. 2005 §4.6). Returns an MPI error code.
int alltoallw_direct(const Topology& t, const void* sendbuf, const int sendcounts[],
                     const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                     const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[]);
}  // namespace zipper::coll
