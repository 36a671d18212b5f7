// One block of `count` elements of `type` per rank, back to back (Gather,
// Scatter, Allgather and Alltoall buffers), addressed with int counts and
// displacements even where ranks * count passes INT_MAX elements.
#pragma once

#include <mpi.h>

#include <vector>

namespace zipper::coll {

/// Blocks in units of unit(): `type` itself while an int holds
/// ranks * count, else a contiguous type of one whole block (count 1 per
/// rank, committed here, freed by the destructor). Either way
/// elements(n) of unit() cover n blocks and displacement(r) is block r's
/// start in units. The choice depends on this rank's count and type only,
/// which is safe for point-to-point and v-collective arguments (the byte
/// streams are the same); collective call sequences must not depend on it.
class UniformBlocks {
 public:
  UniformBlocks(int ranks, int count, MPI_Datatype type);
  ~UniformBlocks();
  UniformBlocks(const UniformBlocks&) = delete;
  UniformBlocks& operator=(const UniformBlocks&) = delete;

  /// MPI_SUCCESS, or the error of building the block type.
  int status() const { return status_; }
  MPI_Datatype unit() const { return unit_; }
  /// Units of one block (count, or 1).
  int per_block() const { return per_block_; }
  /// Units of n consecutive blocks (n <= ranks).
  int elements(int n) const { return n * per_block_; }
  int displacement(int r) const { return r * per_block_; }
  /// per_block() and displacement(r) for r in [0, ranks).
  std::vector<int> counts() const;
  std::vector<int> displacements() const;

 private:
  int ranks_;
  int per_block_;
  MPI_Datatype unit_;
  bool owned_ = false;
  int status_ = MPI_SUCCESS;
};

}  // namespace zipper::coll
