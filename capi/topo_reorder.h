// reorder = true for the topology constructors (Cart_create, Graph_create,
// Dist_graph_create(_adjacent), Cart_map, Graph_map): the new rank of the
// calling process, from client/topo_map.h over the communicator's members.
#pragma once

#include <vector>

#include "../client/communicator.h"
#include "../client/runtime.h"
#include "../client/topo_map.h"

namespace zipper::capi {

/// The new rank (0..n-1) of communicator rank `rank` when the n vertices of
/// `edges` are placed on ranks 0..n-1 of `c` (rank >= n: MPI_UNDEFINED).
/// With `reorder` false, or in a job of more than two sites (the mapping
/// bisects; not generalised yet), the identity. Every member computes the same
/// mapping from the same `edges`. `what` names the call in the debug log
/// (MMPI_LOG_LEVEL=debug: the cut before and after, on rank 0).
int reordered_rank(const client::Runtime& rt, const client::Comm& c, int n,
                   const std::vector<client::TopoEdge>& edges, bool reorder, int rank,
                   const char* what);

/// The edges of a Cartesian grid: each rank to its shift neighbours.
std::vector<client::TopoEdge> cart_edges(const client::Cart& cart);

}  // namespace zipper::capi
