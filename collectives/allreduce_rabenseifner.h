#pragma once
#include "topology.h"
namespace zipper::coll {
/// Allreduce of `count` elements with n concurrent inter-cluster senders
/// (1 <= n <= min(x, y)): each cluster reduce-scatters natively into n
/// segments held by local ranks 0..n-1; local rank j exchanges its segment
/// with the far cluster's local rank j through zipperd (counter_reduce) and
/// both combine low (op) high; each cluster allgathers natively. Every rank
/// ends with identical bits. `sendbuf` may be MPI_IN_PLACE.
/// Algorithm: modified Rabenseifner allreduce, Matsuda et al. §2.4.
int allreduce_rabenseifner(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                           MPI_Datatype type, MPI_Op op, int n);
}  // namespace zipper::coll
