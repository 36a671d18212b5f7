#pragma once
#include "topology.h"
namespace zipper::coll {
/// Bcast of `count` elements of `type` from virtual rank `root`, with n
/// concurrent inter-cluster senders (1 <= n <= min(x, y)): the root's cluster
/// scatters the buffer into n segments over its local ranks 0..n-1; local rank
/// j sends segment j to the far cluster's local rank j through zipperd
/// (counter_copy) while the root's cluster allgathers; the far cluster
/// allgathers once its segments arrived.
/// Algorithm: modified van de Geijn bcast, Matsuda et al. §2.3.
int bcast_vandegeijn(const Topology& t, void* buf, int count, MPI_Datatype type, int root, int n);
}  // namespace zipper::coll
