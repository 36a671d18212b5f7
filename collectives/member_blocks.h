// The blocks of one cluster's members in a buffer laid out by communicator
// rank (gather, scatter, allgather: block r belongs to rank r, `count`
// elements each). Inter-cluster steps move a cluster's blocks as one run in
// member order. When the cluster's members are consecutive ranks that run
// is a slice of the buffer itself; otherwise (an interleaved communicator)
// it is staged in a copy and moved between copy and buffer block by block.
#pragma once

#include <mpi.h>

#include "topology.h"
#include "typed_buffer.h"

namespace zipper::coll {

class MemberBlocks {
 public:
  /// `local`: this cluster's members, else the other cluster's. `buf` may be
  /// null on ranks that hold no such buffer (then data() is null).
  MemberBlocks(const Topology& t, bool local, void* buf, int count, MPI_Datatype type);

  /// The blocks in member order, one contiguous run of members() * count elements.
  void* data() { return in_place_ ? first_ : staged_.data(); }
  int members() const { return static_cast<int>(ranks_.size()); }
  /// Copies the blocks from the buffer into the run (before sending it).
  int stage();
  /// Copies the run into the blocks of the buffer (after receiving it).
  int unstage();

 private:
  std::vector<int> ranks_;  // communicator rank of each member
  void* buf_;
  int count_;
  MPI_Datatype type_;
  bool in_place_ = true;
  void* first_ = nullptr;
  TypedBuffer staged_;
};

}  // namespace zipper::coll
