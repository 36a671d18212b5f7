// Gather and scatter as one rooted transfer with a direction: each rank's own
// block travels to the root (gather) or from it (scatter), and the root holds
// one block per rank. Seen by role, their arguments and checks are the same;
// only which side sends differs.
#pragma once

#include <mmpi.h>

#include "../collectives/direction.h"
#include "../collectives/topology.h"
#include "coll_checks.h"

namespace zipper::capi {

using coll::Direction;

/// A gather's or scatter's arguments by role. `own`: this rank's block
/// (gather's send buffer, scatter's receive buffer; MPI_IN_PLACE at the root),
/// `own_count` elements of `own_type`. `all`: the root's blocks, significant
/// at the root only: block r holds `counts[r]` elements of `all_type` at
/// element `displs[r]` (the v forms), or, where `counts` is null, `all_count`
/// elements at element r * all_count.
struct Rooted {
  Direction dir;
  const void* own;
  int own_count;
  MPI_Datatype own_type;
  const void* all;
  const int* counts;
  const int* displs;
  int all_count;
  MPI_Datatype all_type;

  /// MPI_Gather(v)'s arguments (recvcounts and displs null for MPI_Gather).
  static Rooted gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], int recvcount,
                       MPI_Datatype recvtype) {
    return {Direction::kToRoot, sendbuf, sendcount, sendtype, recvbuf,
            recvcounts,         displs,  recvcount, recvtype};
  }
  /// MPI_Scatter(v)'s arguments (sendcounts and displs null for MPI_Scatter).
  static Rooted scatter(const void* sendbuf, const int sendcounts[], const int displs[],
                        int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype) {
    return {Direction::kFromRoot, recvbuf, recvcount, recvtype, sendbuf,
            sendcounts,           displs,  sendcount, sendtype};
  }

  bool to_root() const { return dir == Direction::kToRoot; }
  bool in_place() const { return own == MPI_IN_PLACE; }
  /// Back to MPI's argument order.
  const void* sendbuf() const { return to_root() ? own : all; }
  void* recvbuf() const { return const_cast<void*>(to_root() ? all : own); }
  int sendcount() const { return to_root() ? own_count : all_count; }
  int recvcount() const { return to_root() ? all_count : own_count; }
  MPI_Datatype sendtype() const { return to_root() ? own_type : all_type; }
  MPI_Datatype recvtype() const { return to_root() ? all_type : own_type; }
};

/// The checks of a rooted transfer on an intra-communicator before anything
/// is communicated, in this order: MPI_ERR_ROOT for a root outside
/// [0, size); MPI_ERR_BUFFER for MPI_IN_PLACE away from the root; the own
/// block's count and type (unless in place); at the root, the blocks'
/// count and type: all_count (check_rooted, MPI_Gather and MPI_Scatter) or
/// counts, then MPI_ERR_ARG for null displs (check_rooted_v, the v forms).
inline int check_rooted_own(const coll::Topology& t, int root, const Rooted& a) {
  if (int rc = check_root(t, root)) return rc;
  if (a.in_place() && t.rank != root) return MPI_ERR_BUFFER;
  if (!a.in_place())
    if (int rc = check_buf(a.own_count, a.own_type)) return rc;
  return MPI_SUCCESS;
}

inline int check_rooted(const coll::Topology& t, int root, const Rooted& a) {
  if (int rc = check_rooted_own(t, root, a)) return rc;
  return t.rank == root ? check_buf(a.all_count, a.all_type) : MPI_SUCCESS;
}

inline int check_rooted_v(const coll::Topology& t, int root, const Rooted& a) {
  if (int rc = check_rooted_own(t, root, a)) return rc;
  if (t.rank != root) return MPI_SUCCESS;
  if (int rc = check_bufs(t.size, a.counts, a.all_type)) return rc;
  return a.displs == nullptr ? MPI_ERR_ARG : MPI_SUCCESS;
}

}  // namespace zipper::capi
