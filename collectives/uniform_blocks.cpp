#include "uniform_blocks.h"

#include <climits>

namespace zipper::coll {

UniformBlocks::UniformBlocks(int ranks, int count, MPI_Datatype type)
    : ranks_(ranks), per_block_(count), unit_(type) {
  if (static_cast<long long>(ranks) * count <= INT_MAX) return;
  MPI_Datatype block = MPI_DATATYPE_NULL;
  status_ = MPI_Type_contiguous(count, type, &block);
  if (status_ == MPI_SUCCESS) status_ = MPI_Type_commit(&block);
  if (status_ != MPI_SUCCESS) {
    if (block != MPI_DATATYPE_NULL) MPI_Type_free(&block);
    per_block_ = 0;
    return;
  }
  unit_ = block;
  owned_ = true;
  per_block_ = 1;
}

UniformBlocks::~UniformBlocks() {
  if (owned_) MPI_Type_free(&unit_);
}

std::vector<int> UniformBlocks::counts() const { return std::vector<int>(ranks_, per_block_); }

std::vector<int> UniformBlocks::displacements() const {
  std::vector<int> d(ranks_);
  for (int r = 0; r < ranks_; ++r) d[r] = displacement(r);
  return d;
}

}  // namespace zipper::coll
