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

}  // namespace zipper::coll
