#pragma once
#include "topology.h"
namespace zipper::coll {
/// Barrier: local barrier, zero-byte exchange between the two clusters'
/// leaders (local rank 0) through zipperd, local barrier.
/// Algorithm: the thesis's two-level barrier (Leiden Zipper/MMPI, 2013).
int barrier_two_level(const Topology& t);
}  // namespace zipper::coll
