#pragma once
#include "schedule.h"
namespace zipper::coll {
/// Non-blocking barrier: in round k every rank r sends an empty message to
/// r + 2^k and receives one from r - 2^k (mod size); after ceil(log2 size)
/// rounds every rank has heard, indirectly, from all. Correct for any layout.
/// Algorithm: dissemination barrier (Hensgen, Finkel, Manber 1988 §3).
void nbc_barrier_dissemination(Schedule& s);
}  // namespace zipper::coll
