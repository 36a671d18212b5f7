#pragma once
#include "topology.h"
namespace zipper::coll {
/// Alltoallv with MPI's arguments (counts and displacements in elements,
/// indexed by virtual rank; sendbuf already resolved from MPI_IN_PLACE): the
/// local blocks go by native MPI_Ialltoallv while every remote block is sent
/// straight to its destination through zipperd (x*y messages per direction).
/// Algorithm: the thesis's alltoall (native local part + remote part).
int alltoallv_direct(const Topology& t, const void* sendbuf, const int* sendcounts,
                     const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                     const int* recvcounts, const int* rdispls, MPI_Datatype recvtype);
}  // namespace zipper::coll
