// Several ranks' blocks (each `counts[r]` elements of `type` at element
// displacement `displs[r]`) packed back to back into bytes, so that a whole
// cluster's blocks cross zipperd as one message whatever the datatype.
// libmmpi runs on homogeneous clusters, where a packed block of `n`
// elements is exactly n * MPI_Type_size bytes.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "topology.h"

namespace zipper::coll {

/// Bytes of `count` elements of `type` once packed.
std::int64_t packed_size(int count, MPI_Datatype type);

/// Appends the blocks of `ranks` (in that order) from `buf` to `out`.
/// Returns an MPI error code.
int pack_blocks(const void* buf, const int counts[], const int displs[], MPI_Datatype type,
                const std::vector<int>& ranks, std::vector<char>* out);
/// The reverse: unpacks `in` (as written by pack_blocks) into `buf`.
int unpack_blocks(const std::vector<char>& in, void* buf, const int counts[], const int displs[],
                  MPI_Datatype type, const std::vector<int>& ranks);

/// One cluster's packed blocks, learnt by one allgather over `t.local`:
/// each member's size in bytes (local order), their sum, and, where the
/// sum fits an int, each block's byte count and offset once packed back to
/// back (the counts and displacements MPI_Igatherv/Iscatterv over t.local
/// take; empty where sum > INT_MAX, which the caller must carry otherwise).
struct ClusterBlocks {
  std::vector<std::int64_t> sizes;
  std::int64_t sum = 0;
  std::vector<int> counts, offsets;
};
/// Fills `out` from this member's block size `mine` (bytes); a native step,
/// waited through wait_native (progress meanwhile). Returns an MPI error code.
int cluster_blocks(const Topology& t, std::int64_t mine, ClusterBlocks* out);

}  // namespace zipper::coll
