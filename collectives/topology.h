// Who is where in a communicator, as the collectives see it: each member is
// in one of the job's sites (client/sites.h); site_members counts them per
// site. Every collective runs its intra-cluster steps natively on the
// communicator's collective native communicator (this site's members, in
// communicator order) and its inter-cluster steps through the
// point-to-point interface on the communicator's collective context.
//
// The two-level algorithms have one inter-site step between two sites: on a
// communicator over more sites (kMaxSitesSpanned) the C API runs the
// non-blocking schedules instead (capi/many_sites.h), which hold for any
// number of sites.
#pragma once

#include <mpi.h>

#include <vector>

#include "../client/point_to_point.h"

namespace zipper::coll {

/// Most sites the two-level algorithms join (one inter-site step).
inline constexpr int kMaxSitesSpanned = 2;

struct Topology {
  client::PointToPoint* p2p = nullptr;
  client::CommPtr comm;
  MPI_Comm local = MPI_COMM_NULL;  // this cluster's members, reserved for collectives
  int rank = 0, size = 1;          // rank in the communicator, and its size
  // Members in each site of the job, in site order (0: none there); the
  // tuning rules' shape (selection.h).
  std::vector<int> site_members;
  int sites_spanned = 1;  // sites holding at least one member
  int local_rank = 0, local_size = 1;
  int remote_size = 0;  // members in other sites (0: the communicator lies in this one)

  static Topology of(client::PointToPoint& p2p, client::CommPtr comm);

  bool standalone() const { return remote_size == 0; }
  /// True when the other site's members come before this site's in rank
  /// order (reductions combine the earlier site's partial first).
  bool remote_first() const { return remote_first_; }
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
  /// Largest useful number of concurrent inter-site senders: the fewest
  /// members of a site holding any (0 when only one site holds members).
  int max_senders() const;
  /// Clamps a requested n to 1..max_senders().
  int clamp_senders(int n) const;

 private:
  bool remote_first_ = false;
};

}  // namespace zipper::coll
