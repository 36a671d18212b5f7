// Tags of the collectives added for issue 12 (v-variants, scans,
// reduce_scatter, alltoallw) and of the non-blocking collectives. Like
// tags.h they travel on the collective context only. Non-blocking
// collectives take kTagNbcBase + (per-communicator sequence number mod
// kNbcTagSpan): MPI requires every rank to start them in the same order, so
// the n-th one gets the same tag everywhere and several outstanding ones (and
// the blocking ones, below kTagNbcBase) never match each other's messages.
#pragma once

namespace zipper::coll {

inline constexpr int kTagGatherv = 20;
inline constexpr int kTagScatterv = 21;
inline constexpr int kTagAllgatherv = 22;
inline constexpr int kTagReduceRuns = 23;
inline constexpr int kTagScan = 24;
inline constexpr int kTagAlltoallw = 25;

inline constexpr int kTagNbcBase = 1024;
// Kept below 2^23 - kTagNbcBase: Open MPI's smallest MPI_TAG_UB (pml ucx) is 2^23 - 1.
inline constexpr int kNbcTagSpan = 1 << 16;

}  // namespace zipper::coll
