// Who is where in a communicator, as the collectives see it: each member is
// in the low or the high cluster; x' and y' count them. Every collective
// runs its intra-cluster steps natively on the communicator's collective
// native communicator (this cluster's members, in communicator order) and
// its inter-cluster steps through the point-to-point interface on the
// communicator's collective context.
#pragma once

#include <mpi.h>

#include <vector>

#include "../client/point_to_point.h"

namespace zipper::coll {

struct Topology {
  client::PointToPoint* p2p = nullptr;
  client::CommPtr comm;
  MPI_Comm local = MPI_COMM_NULL;  // this cluster's members, reserved for collectives
  int rank = 0, size = 1;          // rank in the communicator, and its size
  int x = 1, y = 0;                // members in the low and the high cluster
  int local_rank = 0, local_size = 1;
  int remote_size = 0;  // members in the other cluster (0: the communicator lies in this one)

  static Topology of(client::PointToPoint& p2p, client::CommPtr comm);

  bool standalone() const { return remote_size == 0; }
  /// True when this cluster's members come after the other cluster's in
  /// rank order (reductions combine the earlier cluster's partial first).
  bool high() const { return high_; }
  bool is_local(int r) const { return comm->map().is_local(r); }
  /// True when each cluster's members are consecutive ranks (a reduction
  /// with a non-commutative operation can then combine per cluster).
  bool blocked() const { return comm->map().blocked(); }

  // Rank mapping. Algorithms address ranks only through these, never by
  // offset arithmetic, so that a communicator whose ranks interleave the two
  // clusters (Comm_split with keys, a reordered Comm_dup) needs no change in
  // the algorithms.
  /// Rank of this cluster's i-th member, 0 <= i < local_size.
  int local_member(int i) const { return comm->map().local_members()[static_cast<std::size_t>(i)]; }
  /// Rank of the other cluster's j-th member, 0 <= j < remote_size.
  int remote_member(int j) const {
    return comm->map().remote_members()[static_cast<std::size_t>(j)];
  }
  /// Position of rank r among the members of its own cluster.
  int index_in_cluster(int r) const { return comm->map().index_in_cluster(r); }
  /// a[local_member(i)] for each i: a per-rank array cut to this cluster's members.
  std::vector<int> local_slice(const int* a) const;
  /// Largest useful number of concurrent inter-cluster senders: min(x, y).
  int max_senders() const { return x < y ? x : y; }
  /// Clamps a requested n to 1..min(x, y).
  int clamp_senders(int n) const;

 private:
  bool high_ = false;
};

}  // namespace zipper::coll
