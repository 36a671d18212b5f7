// Who is where in MMPI_COMM_WORLD, as the collectives see it: the low
// cluster holds virtual ranks 0..x-1, the high cluster x..x+y-1. Every
// collective runs its intra-cluster steps natively on the local cluster's
// collective communicator and its inter-cluster steps through zipperd.
#pragma once

#include <mpi.h>

#include "../client/runtime.h"

namespace zipper::coll {

struct Topology {
  client::Runtime* rt = nullptr;
  MPI_Comm local = MPI_COMM_NULL;  // this cluster, reserved for collectives
  int rank = 0, size = 1;          // virtual rank and world size
  int x = 1, y = 0;                // ranks in the low and the high cluster
  int offset = 0;                  // virtual rank of local rank 0
  int local_rank = 0, local_size = 1;
  int remote_offset = 0, remote_size = 0;  // the other cluster (size 0: standalone)

  static Topology of(client::Runtime& rt);

  bool standalone() const { return remote_size == 0; }
  bool high() const { return offset > 0; }
  bool is_local(int vrank) const { return vrank >= offset && vrank < offset + local_size; }

  // Rank mapping. New code addresses ranks only through these, never by
  // offset arithmetic, so that a communicator whose ranks interleave the two
  // clusters (Comm_split with keys, a reordered Comm_dup) needs no change in
  // the algorithms.
  /// Rank (in this topology's communicator) of this cluster's i-th member, 0 <= i < local_size.
  int local_member(int i) const { return offset + i; }
  /// Rank of the other cluster's j-th member, 0 <= j < remote_size.
  int remote_member(int j) const { return remote_offset + j; }
  /// Position of rank r among the members of its own cluster.
  int index_in_cluster(int r) const { return is_local(r) ? r - offset : r - remote_offset; }
  /// Largest useful number of concurrent inter-cluster senders: min(x, y).
  int max_senders() const { return x < y ? x : y; }
  /// Clamps a requested n to 1..min(x, y).
  int clamp_senders(int n) const;
};

}  // namespace zipper::coll
