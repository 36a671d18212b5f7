#pragma once
#include <cstdint>

#include "topology.h"
namespace zipper::coll {
/// Allreduce of `count` elements: native reduce to each cluster's local rank
/// 0, exchange of the two partials between those leaders through zipperd,
/// both combine low (op) high, native bcast. `sendbuf` may be MPI_IN_PLACE.
/// segment_bytes > 0 sends the inter-cluster step as messages of at most
/// that size (chunking, Vadhiyar et al. §3); 0 = one message.
/// Algorithm: "two-tier" allreduce, Matsuda et al. (baseline of §2.4).
int allreduce_two_tier(const Topology& t, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, std::uint64_t segment_bytes = 0);
}  // namespace zipper::coll
