// A communicator's ranks in rank order, cut into runs: maximal sequences of
// consecutive ranks in the same cluster. MPI reduces and scans in rank
// order, so for a non-commutative operation the clusters' partial results
// can only be combined run by run. MMPI_COMM_WORLD has one run per cluster; a
// Comm_split with keys or a reordered Comm_dup may interleave them.
#pragma once

#include <mpi.h>

#include <functional>
#include <vector>

#include "topology.h"

namespace zipper::coll {

struct Run {
  int first = 0, last = 0;  // ranks first..last (inclusive)
  bool local = false;       // in this rank's cluster
};

/// The runs of ranks 0..size-1 where `is_local` tells the cluster of each.
std::vector<Run> rank_runs(int size, const std::function<bool(int)>& is_local);
std::vector<Run> rank_runs(const Topology& t);

/// Number of runs with local == `local`.
int count_runs(const std::vector<Run>& runs, bool local);

/// At a cluster's leader holding `all` (this cluster's inputs, local_size
/// blocks of `count` elements in index_in_cluster order): writes the
/// reduction of each local run, in rank order, into consecutive blocks of
/// `out`. Returns an MPI error code.
int reduce_local_runs(const Topology& t, const std::vector<Run>& runs, const void* all, void* out,
                      int count, MPI_Datatype type, MPI_Op op);

/// acc = acc (op) x, or acc = x when *defined is false (then sets it).
/// `tmp` is scratch of `count` elements. Returns an MPI error code.
int fold_right(void* acc, bool* defined, const void* x, void* tmp, int count, MPI_Datatype type,
               MPI_Op op);

}  // namespace zipper::coll
