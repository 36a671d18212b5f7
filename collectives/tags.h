// Tags of the collectives' internal messages. They travel on the collective
// context (and the cluster's collective communicator), so they never meet
// user messages; one tag per collective keeps traces readable.
#pragma once

namespace zipper::coll {

inline constexpr int kTagBarrier = 1;
inline constexpr int kTagBcast = 2;
inline constexpr int kTagReduce = 3;
inline constexpr int kTagAllreduce = 4;
inline constexpr int kTagAlltoall = 5;
inline constexpr int kTagGather = 6;
inline constexpr int kTagScatter = 7;
inline constexpr int kTagAllgather = 8;
inline constexpr int kTagGatherv = 20;
inline constexpr int kTagScatterv = 21;
inline constexpr int kTagAllgatherv = 22;
inline constexpr int kTagReduceRuns = 23;
inline constexpr int kTagScan = 24;
inline constexpr int kTagAlltoallw = 25;
inline constexpr int kTagReduceScatter = 26;

// Non-blocking collectives take kTagNbcBase + (per-communicator sequence
// number mod kNbcTagSpan): MPI requires every rank to start them in the same
// order, so the n-th one gets the same tag everywhere and several outstanding
// ones (and the blocking ones, below kTagNbcBase) never match each other's
// messages.
inline constexpr int kTagNbcBase = 1024;
// Kept below 2^23 - kTagNbcBase: Open MPI's smallest MPI_TAG_UB (pml ucx) is 2^23 - 1.
inline constexpr int kNbcTagSpan = 1 << 16;

}  // namespace zipper::coll
