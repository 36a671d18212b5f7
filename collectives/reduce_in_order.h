#pragma once
#include "topology.h"
namespace zipper::coll {
/// Reduce of `count` elements to rank `root` combining strictly in rank
/// order, v0 op (v1 op (... op v_{p-1})): the fallback for a non-commutative
/// operation on a communicator whose clusters' ranks interleave, where no
/// per-cluster partial is a run of consecutive ranks. The root receives the
/// vectors one at a time from the highest rank down and folds each in
/// (MPI_Reduce_local), holding two vectors. p - 1 messages into the root.
/// Algorithm: linear reduce (MPI-3.1 §5.9.1, the canonical evaluation order).
int reduce_in_order(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int root);
}  // namespace zipper::coll
