#pragma once
#include "topology.h"
namespace zipper::coll {
/// Bcast of `count` elements of `type` from virtual rank `root`: the root
/// first sends the whole buffer to the far cluster's leader through zipperd,
/// then both clusters broadcast natively (the root's overlapping its send).
/// Algorithm: "farfirst", Matsuda et al. (baseline of §2.3).
int bcast_farfirst(const Topology& t, void* buf, int count, MPI_Datatype type, int root);
}  // namespace zipper::coll
