#pragma once
#include <cstdint>

#include "topology.h"
namespace zipper::coll {
/// Bcast of `count` elements of `type` from virtual rank `root`: the root
/// first sends the whole buffer to the far cluster's leader through zipperd,
/// then both clusters broadcast natively (the root's overlapping its send).
/// segment_bytes > 0 pipelines the far side: the buffer crosses as segments
/// of that size and the far cluster broadcasts segment k while k+1.. arrive
/// (segmented pipeline, Vadhiyar et al. §3); 0 sends it whole.
/// Algorithm: "farfirst", Matsuda et al. (baseline of §2.3).
int bcast_farfirst(const Topology& t, void* buf, int count, MPI_Datatype type, int root,
                   std::uint64_t segment_bytes = 0);
}  // namespace zipper::coll
