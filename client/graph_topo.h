// Graph and distributed-graph process topologies (MPI-3.1 §7.5.3, §7.5.4):
// what a communicator remembers of them, and the neighbour lists the
// neighbourhood collectives (§7.6) walk, in the order the standard gives.
//
// Pure data, independent of MPI's handles; the C API validates the arguments
// (capi/topo_graph.cpp) before they get here.
#pragma once

#include <vector>

#include "cart.h"

namespace zipper::client {

/// MPI_Graph_create's arrays: node i's neighbours are
/// edges[index[i-1] .. index[i]) (index[-1] = 0).
struct GraphTopo {
  std::vector<int> index, edges;

  int nnodes() const { return static_cast<int>(index.size()); }
  /// Neighbours of `rank`, in the order they were given (0 <= rank < nnodes()).
  std::vector<int> neighbours(int rank) const {
    const int lo = rank == 0 ? 0 : index[static_cast<std::size_t>(rank - 1)];
    const int hi = index[static_cast<std::size_t>(rank)];
    return std::vector<int>(edges.begin() + lo, edges.begin() + hi);
  }
};

/// This process's edges of a distributed graph: ranks it receives from
/// (sources) and sends to (destinations), with weights (1 each when the
/// graph was created MPI_UNWEIGHTED).
struct DistGraphTopo {
  std::vector<int> sources, source_weights, destinations, dest_weights;
  bool weighted = false;
};

/// The neighbours of a neighbourhood collective: receive block i comes from
/// in[i], send block i goes to out[i]; MPI_PROC_NULL (`proc_null`) entries
/// keep their block but move nothing.
struct NeighbourLists {
  std::vector<int> in, out;
};

/// Cartesian (§7.6: for each dimension, the -1 then the +1 shift
/// neighbour, for receiving and sending alike).
inline NeighbourLists neighbours_of(const Cart& c, int rank, int proc_null) {
  NeighbourLists l;
  for (int d = 0; d < c.ndims(); ++d) {
    const auto [src, dst] = c.shift(rank, d, 1, proc_null);
    l.in.push_back(src);
    l.in.push_back(dst);
  }
  l.out = l.in;
  return l;
}

inline NeighbourLists neighbours_of(const GraphTopo& g, int rank) {
  NeighbourLists l;
  l.in = g.neighbours(rank);
  l.out = l.in;
  return l;
}

inline NeighbourLists neighbours_of(const DistGraphTopo& g) {
  return NeighbourLists{g.sources, g.destinations};
}

}  // namespace zipper::client
