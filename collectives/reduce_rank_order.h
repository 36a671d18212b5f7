#pragma once
#include "topology.h"
namespace zipper::coll {
/// Reduces every rank's `count` elements of `sendbuf` in rank order and
/// leaves the result in `result` at both clusters' leaders (local rank 0;
/// `result` is ignored elsewhere). sendbuf is never MPI_IN_PLACE here.
/// Commutative operations, and any operation when each cluster's ranks are
/// consecutive (one run each): native MPI_Reduce per cluster, then the two
/// leaders swap partials and combine them in run order (one inter-cluster
/// message each way). A non-commutative operation on interleaved clusters:
/// each leader gathers its cluster's inputs natively, reduces each of its
/// runs (rank_runs.h), swaps the run results with the other leader and folds
/// all runs in rank order. Algorithm: two-level reduction (MagPIe, Kielmann
/// et al. 1999 §3) with a run-wise fold for non-commutative operations.
/// Returns an MPI error code.
int reduce_rank_order(const Topology& t, const void* sendbuf, void* result, int count,
                      MPI_Datatype type, MPI_Op op);
}  // namespace zipper::coll
