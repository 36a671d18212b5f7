#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Scan (exclusive = false) or MPI_Exscan (exclusive = true) over
/// `count` elements at sendbuf (never MPI_IN_PLACE here) into recvbuf, in
/// rank order, for any operation and any layout. Each cluster's leader
/// gathers its cluster's inputs natively, reduces each of its runs
/// (rank_runs.h), swaps the run results with the other leader (one message
/// each way), walks all runs in rank order computing the prefix of each of
/// its own ranks, and scatters the prefixes natively. Exscan leaves rank 0's
/// recvbuf untouched (MPI leaves it undefined). Algorithm: two-level scan
/// with the carry of the preceding runs (the hierarchical scan of Sanders &
/// Träff 2006, §2, with one leader per cluster). Returns an MPI error code.
int scan_runs(const Topology& t, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
              MPI_Op op, bool exclusive);
}  // namespace zipper::coll
