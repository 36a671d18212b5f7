#pragma once
#include <cstdint>

#include "topology.h"
namespace zipper::coll {
/// Allreduce of `count` elements with n concurrent inter-cluster senders
/// (1 <= n <= min(x, y)). The vector is cut into n segments S_j, each owned
/// by a group of consecutive local ranks (segments.h GroupedSegments):
///   1. each cluster reduce-scatters natively, every local rank getting one
///      piece (balanced: about M/p each);
///   2. the pieces of S_j gather at group j's leader (native);
///   3. leader j exchanges S_j with the far cluster's leader j through
///      zipperd, both combine low (op) high;
///   4. the leader hands the combined pieces back (native) and each cluster
///      allgathers them natively.
/// With n = local size, steps 2 and 4 vanish. Every rank ends with identical
/// bits. `sendbuf` may be MPI_IN_PLACE. Returns an MPI error code.
/// segment_bytes > 0 sends the inter-cluster step as messages of at most
/// that size (chunking, Vadhiyar et al. §3); 0 = one message.
/// Algorithm: modified Rabenseifner allreduce, Matsuda et al. §2.4; the
/// balanced reduce-scatter and allgather (instead of n owners and p - n
/// empty pieces) keep Open MPI's native steps bandwidth-optimal.
int allreduce_rabenseifner(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                           MPI_Datatype type, MPI_Op op, int n, std::uint64_t segment_bytes = 0);
}  // namespace zipper::coll
