#pragma once
#include <cstdint>

#include "topology.h"
namespace zipper::coll {
/// Reduce of `count` elements to virtual rank `root`: each cluster reduces
/// natively (the root's cluster to the root, the far cluster to its local
/// rank 0); the far partial crosses zipperd to the root, which combines low
/// (op) high. The root's receive is posted before its native reduce, so both
/// overlap (the thesis received them one after the other, blocking).
/// segment_bytes > 0 pipelines the far side: it reduces and sends segment k
/// while earlier segments cross (Vadhiyar et al. §3); 0 = one message.
/// Algorithm: reduce through leaders (two-level, as in MagPIe).
int reduce_leaders(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, int root, std::uint64_t segment_bytes = 0);
}  // namespace zipper::coll
