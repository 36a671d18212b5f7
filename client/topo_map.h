// Placing a process topology on two clusters (MPI-3.1 §7.5 `reorder`): the
// vertices of the application's graph are split into the low cluster's and
// the high cluster's share of the processes so that as little edge weight as
// possible crosses the bridge (the cut), the one slow link of the machine.
// LibTopoMap (Hoefler and Snir, ICS'11 §4) maps by graph partitioning; here
// the machine has two parts of fixed sizes, so the mapping is one bisection
// with fixed part sizes, computed by the placement partitioner that
// zipper-place uses (place/placement.h: METIS, made exact in size and
// refined by Kernighan–Lin pair swaps, or an exhaustive search where there
// are few enough bisections), with the edge weight as the cost.
//
// Pure computation, independent of MPI: every rank computes the same answer
// from the same input (METIS runs with a fixed seed), and unit tests compare
// it with a brute-force search.
#pragma once

#include <cstdint>
#include <vector>

namespace zipper::client {

/// A directed edge u -> v of weight w >= 0 (MPI's unweighted edges weigh 1).
struct TopoEdge {
  int u = 0, v = 0;
  std::int64_t w = 1;
};

/// Weight of the edges whose ends lie in different parts (`part[v]` 0 or 1).
std::int64_t cut_weight(const std::vector<TopoEdge>& edges, const std::vector<int>& part);

struct TopoMapOptions {
  /// Search every bisection when there are at most this many (C(n, n_low))
  /// and at most 64 processes.
  std::int64_t exhaustive_limit = 200000;
};

struct TopoMapResult {
  /// vertex[p]: the vertex (new rank) given to process p; a permutation of 0..n-1.
  std::vector<int> vertex;
  std::int64_t cut_before = 0;  // the identity order's cut
  std::int64_t cut_after = 0;   // this order's
};

/// Maps the n vertices of `edges` onto n processes; cluster[p] (0 or 1) is
/// the cluster of process p (old rank order). Each vertex goes to a process
/// of the cluster its part stands for; a vertex whose identity process is
/// already in the right cluster stays there, so an order that is already
/// best is kept. Never returns a larger cut than the identity's. Edges with
/// an end outside 0..n-1 are ignored (the caller validates).
TopoMapResult map_to_clusters(int n, const std::vector<TopoEdge>& edges,
                              const std::vector<int>& cluster, const TopoMapOptions& opt = {});

}  // namespace zipper::client
