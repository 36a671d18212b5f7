#pragma once
#include <cstdint>

#include "topology.h"
namespace zipper::coll {
/// Bcast of `count` elements of `type` from virtual rank `root`, with n
/// concurrent inter-cluster senders (1 <= n <= min(x, y)): the root's cluster
/// scatters the buffer into n segments over its local ranks 0..n-1; local rank
/// j sends segment j to the far cluster's local rank j through zipperd
/// (counter_copy) while the root's cluster allgathers; the far cluster
/// allgathers once its segments arrived.
/// segment_bytes > 0 sends the inter-cluster step as messages of at most
/// that size (chunking, Vadhiyar et al. §3); 0 = one message.
/// Algorithm: modified van de Geijn bcast, Matsuda et al. §2.3.
int bcast_vandegeijn(const Topology& t, void* buf, int count, MPI_Datatype type, int root, int n,
                     std::uint64_t segment_bytes = 0);
}  // namespace zipper::coll
