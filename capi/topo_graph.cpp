// Graph and distributed-graph topology entry points of the C API (mmpi.h),
// MPI-3.1 §7.5.3-7.5.5: the constructors (collective over the old
// communicator; with reorder, ranks are placed by capi/topo_reorder.h), the
// queries, Graph_map and Cart_map. Vertex i of a graph is rank i of the new
// communicator; with reorder the process that gets rank i may change, and it
// gets vertex i's adjacency, wherever that was given.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <vector>

#include "comm_create.h"
#include "handles.h"
#include "topo_reorder.h"

using zipper::client::Cart;
using zipper::client::Comm;
using zipper::client::DistGraphTopo;
using zipper::client::GraphTopo;
using zipper::client::Runtime;
using zipper::client::TopoEdge;
using namespace zipper::capi;

namespace {

// MPI_Graph_create's arrays: index non-decreasing from >= 0, edges in 0..nnodes-1.
int check_graph(int nnodes, int size, const int index[], const int edges[], GraphTopo* g) {
  if (nnodes < 0 || nnodes > size) return MPI_ERR_ARG;
  if (nnodes > 0 && index == nullptr) return MPI_ERR_ARG;
  int prev = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < prev) return MPI_ERR_ARG;
    prev = index[i];
  }
  if (prev > 0 && edges == nullptr) return MPI_ERR_ARG;
  for (int k = 0; k < prev; ++k)
    if (edges[k] < 0 || edges[k] >= nnodes) return MPI_ERR_ARG;
  g->index.assign(index, index + nnodes);
  g->edges.assign(edges, edges + prev);
  return MPI_SUCCESS;
}

std::vector<TopoEdge> graph_edges(const GraphTopo& g) {
  std::vector<TopoEdge> e;
  for (int v = 0; v < g.nnodes(); ++v)
    for (int u : g.neighbours(v)) e.push_back({v, u, 1});
  return e;
}

// Every member's `mine`, concatenated in rank order (first[r]: where rank r's start).
int allgather_ints(MPI_Comm comm, int size, const std::vector<int>& mine, std::vector<int>* all,
                   std::vector<int>* first) {
  std::vector<int> counts(static_cast<std::size_t>(size));
  const int n = static_cast<int>(mine.size());
  if (int rc = mmpi_impl_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm)) return rc;
  first->assign(static_cast<std::size_t>(size) + 1, 0);
  for (int r = 0; r < size; ++r)
    (*first)[static_cast<std::size_t>(r) + 1] =
        (*first)[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)];
  all->assign(static_cast<std::size_t>(first->back()), 0);
  return mmpi_impl_Allgatherv(mine.data(), n, MPI_INT, all->data(), counts.data(), first->data(),
                              MPI_INT, comm);
}

bool is_unweighted(const int* w) { return w == MPI_UNWEIGHTED; }

// Whether reorder = true moves dist-graph vertices between processes
// (MMPI_DIST_GRAPH_REORDER=1, client/settings.h). Off by default: MPICH and
// Open MPI's default component keep every process's own adjacency under
// reorder, and programs (MPICH's test suite among them) rely on it; a
// graph's vertex i is rank i.
bool dist_graph_reorder(const Runtime& rt) { return rt.settings().calls.dist_graph_reorder; }

// Creates the dist-graph communicator: vertex v's adjacency is adj[v]
// (neighbours as vertices = new ranks), every member holds all of adj.
int finish_dist_graph(Runtime& rt, const std::shared_ptr<Comm>& c, std::vector<DistGraphTopo> adj,
                      bool reorder, MPI_Comm* out, const char* what) {
  const int n = c->size();
  std::vector<TopoEdge> edges;
  for (int v = 0; v < n; ++v) {
    const DistGraphTopo& a = adj[static_cast<std::size_t>(v)];
    for (std::size_t k = 0; k < a.destinations.size(); ++k)
      edges.push_back({v, a.destinations[k], a.weighted ? a.dest_weights[k] : 1});
  }
  const int key =
      reordered_rank(rt, *c, n, edges, reorder && dist_graph_reorder(rt), c->rank(), what);
  std::shared_ptr<Comm> nc;
  if (int rc = split(rt, c, 0, key, &nc)) return rc;
  nc->dist_graph = std::move(adj[static_cast<std::size_t>(nc->rank())]);
  *out = handle_of(*nc);
  return MPI_SUCCESS;
}

int graph_of(MPI_Comm comm, std::shared_ptr<Comm>* c) {
  Runtime* rt;
  if (int rc = lookup(comm, &rt, c)) return rc;
  return (*c)->graph ? MPI_SUCCESS : MPI_ERR_TOPOLOGY;
}

}  // namespace

extern "C" {

int mmpi_impl_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                           int reorder, MPI_Comm* comm_graph) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm_old, &rt, &c)) return rc;
  if (c->inter) return MPI_ERR_COMM;  // topologies are for intra-communicators
  if (comm_graph == nullptr) return MPI_ERR_ARG;
  GraphTopo g;
  if (int rc = check_graph(nnodes, c->size(), index, edges, &g)) return rc;
  const int key =
      reordered_rank(*rt, *c, nnodes, graph_edges(g), reorder != 0, c->rank(), "MMPI_Graph_create");
  std::shared_ptr<Comm> n;
  if (int rc = split(*rt, c, key == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, &n)) return rc;
  if (n) n->graph = std::move(g);
  *comm_graph = n ? handle_of(*n) : MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int mmpi_impl_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                        int* newrank) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (newrank == nullptr || nnodes <= 0) return MPI_ERR_ARG;
  GraphTopo g;
  if (int rc = check_graph(nnodes, c->size(), index, edges, &g)) return rc;
  *newrank = reordered_rank(*rt, *c, nnodes, graph_edges(g), true, c->rank(), "MMPI_Graph_map");
  return MPI_SUCCESS;
}

int mmpi_impl_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                       int* newrank) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (newrank == nullptr || ndims < 0 || (ndims > 0 && (dims == nullptr || periods == nullptr)))
    return MPI_ERR_ARG;
  Cart cart;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return MPI_ERR_DIMS;
    cart.dims.push_back(dims[i]);
    cart.periods.push_back(periods[i] != 0);
  }
  if (cart.size() > c->size()) return MPI_ERR_DIMS;
  *newrank =
      reordered_rank(*rt, *c, cart.size(), cart_edges(cart), true, c->rank(), "MMPI_Cart_map");
  return MPI_SUCCESS;
}

int mmpi_impl_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  std::shared_ptr<Comm> c;
  if (int rc = graph_of(comm, &c)) return rc;
  if (nnodes == nullptr || nedges == nullptr) return MPI_ERR_ARG;
  *nnodes = c->graph->nnodes();
  *nedges = static_cast<int>(c->graph->edges.size());
  return MPI_SUCCESS;
}

int mmpi_impl_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  std::shared_ptr<Comm> c;
  if (int rc = graph_of(comm, &c)) return rc;
  const GraphTopo& g = *c->graph;
  if (maxindex < 0 || maxedges < 0) return MPI_ERR_ARG;
  std::copy_n(g.index.begin(), std::min<std::size_t>(g.index.size(), maxindex), index);
  std::copy_n(g.edges.begin(), std::min<std::size_t>(g.edges.size(), maxedges), edges);
  return MPI_SUCCESS;
}

int mmpi_impl_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  std::shared_ptr<Comm> c;
  if (int rc = graph_of(comm, &c)) return rc;
  if (rank < 0 || rank >= c->graph->nnodes()) return MPI_ERR_RANK;
  if (nneighbors == nullptr) return MPI_ERR_ARG;
  *nneighbors = static_cast<int>(c->graph->neighbours(rank).size());
  return MPI_SUCCESS;
}

int mmpi_impl_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  std::shared_ptr<Comm> c;
  if (int rc = graph_of(comm, &c)) return rc;
  if (rank < 0 || rank >= c->graph->nnodes()) return MPI_ERR_RANK;
  if (maxneighbors < 0) return MPI_ERR_ARG;
  const auto nb = c->graph->neighbours(rank);
  std::copy_n(nb.begin(), std::min<std::size_t>(nb.size(), maxneighbors), neighbors);
  return MPI_SUCCESS;
}

int mmpi_impl_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                         const int sourceweights[], int outdegree,
                                         const int destinations[], const int destweights[],
                                         MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  (void)info;
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm_old, &rt, &c)) return rc;
  if (c->inter) return MPI_ERR_COMM;  // topologies are for intra-communicators
  if (comm_dist_graph == nullptr || indegree < 0 || outdegree < 0) return MPI_ERR_ARG;
  if ((indegree > 0 && sources == nullptr) || (outdegree > 0 && destinations == nullptr))
    return MPI_ERR_ARG;
  const int n = c->size();
  for (int i = 0; i < indegree; ++i)
    if (sources[i] < 0 || sources[i] >= n) return MPI_ERR_RANK;
  for (int i = 0; i < outdegree; ++i)
    if (destinations[i] < 0 || destinations[i] >= n) return MPI_ERR_RANK;
  DistGraphTopo mine;
  mine.weighted = !is_unweighted(sourceweights) && !is_unweighted(destweights);
  mine.sources.assign(sources, sources + indegree);
  mine.destinations.assign(destinations, destinations + outdegree);
  mine.source_weights.assign(static_cast<std::size_t>(indegree), 1);
  mine.dest_weights.assign(static_cast<std::size_t>(outdegree), 1);
  if (mine.weighted) {
    if ((indegree > 0 && sourceweights == MPI_WEIGHTS_EMPTY) ||
        (outdegree > 0 && destweights == MPI_WEIGHTS_EMPTY))
      return MPI_ERR_ARG;
    if (indegree > 0) mine.source_weights.assign(sourceweights, sourceweights + indegree);
    if (outdegree > 0) mine.dest_weights.assign(destweights, destweights + outdegree);
  }
  if (!reorder) {
    std::shared_ptr<Comm> nc;
    if (int rc = split(*rt, c, 0, c->rank(), &nc)) return rc;
    nc->dist_graph = std::move(mine);
    *comm_dist_graph = handle_of(*nc);
    return MPI_SUCCESS;
  }
  // Every vertex's adjacency on every member, as
  // [weighted, indegree, outdegree, sources, sw, destinations, dw].
  std::vector<int> flat{mine.weighted ? 1 : 0, indegree, outdegree};
  for (const auto* v :
       {&mine.sources, &mine.source_weights, &mine.destinations, &mine.dest_weights})
    flat.insert(flat.end(), v->begin(), v->end());
  std::vector<int> all, first;
  if (int rc = allgather_ints(comm_old, n, flat, &all, &first)) return rc;
  std::vector<DistGraphTopo> adj(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) {
    const int* p = all.data() + first[static_cast<std::size_t>(v)];
    DistGraphTopo& a = adj[static_cast<std::size_t>(v)];
    a.weighted = p[0] != 0;
    const int in = p[1], out = p[2];
    p += 3;
    a.sources.assign(p, p + in);
    a.source_weights.assign(p + in, p + 2 * in);
    a.destinations.assign(p + 2 * in, p + 2 * in + out);
    a.dest_weights.assign(p + 2 * in + out, p + 2 * in + 2 * out);
  }
  return finish_dist_graph(*rt, c, std::move(adj), true, comm_dist_graph,
                           "MMPI_Dist_graph_create_adjacent");
}

int mmpi_impl_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[],
                                const int targets[], const int weights[], MPI_Info info,
                                int reorder, MPI_Comm* newcomm) {
  (void)info;
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm_old, &rt, &c)) return rc;
  if (c->inter) return MPI_ERR_COMM;  // topologies are for intra-communicators
  if (newcomm == nullptr || n < 0 || (n > 0 && (nodes == nullptr || degrees == nullptr)))
    return MPI_ERR_ARG;
  const int size = c->size();
  const bool weighted = !is_unweighted(weights);
  // This rank's edges as (source, target, weight) triples.
  std::vector<int> mine;
  int k = 0;
  for (int i = 0; i < n; ++i) {
    if (nodes[i] < 0 || nodes[i] >= size) return MPI_ERR_RANK;
    if (degrees[i] < 0) return MPI_ERR_ARG;
    for (int d = 0; d < degrees[i]; ++d, ++k) {
      if (targets[k] < 0 || targets[k] >= size) return MPI_ERR_RANK;
      if (weighted && (weights == MPI_WEIGHTS_EMPTY || weights[k] < 0)) return MPI_ERR_ARG;
      mine.insert(mine.end(), {nodes[i], targets[k], weighted ? weights[k] : 1});
    }
  }
  std::vector<int> all, first;
  if (int rc = allgather_ints(comm_old, size, mine, &all, &first)) return rc;
  // Every edge in one global order, so that a vertex's in-list and its
  // neighbour's out-list list repeated edges alike (matching order).
  int any_weighted = weighted ? 1 : 0, all_weighted = 0;
  if (int rc = mmpi_impl_Allreduce(&any_weighted, &all_weighted, 1, MPI_INT, MPI_MAX, comm_old))
    return rc;
  std::vector<DistGraphTopo> adj(static_cast<std::size_t>(size));
  for (std::size_t e = 0; e + 2 < all.size(); e += 3) {
    const int s = all[e], t = all[e + 1], w = all[e + 2];
    adj[static_cast<std::size_t>(s)].destinations.push_back(t);
    adj[static_cast<std::size_t>(s)].dest_weights.push_back(w);
    adj[static_cast<std::size_t>(t)].sources.push_back(s);
    adj[static_cast<std::size_t>(t)].source_weights.push_back(w);
  }
  for (auto& a : adj) a.weighted = all_weighted != 0;
  return finish_dist_graph(*rt, c, std::move(adj), reorder != 0, newcomm, "MMPI_Dist_graph_create");
}

int mmpi_impl_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree,
                                         int* weighted) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (indegree == nullptr || outdegree == nullptr || weighted == nullptr) return MPI_ERR_ARG;
  if (!c->dist_graph) return MPI_ERR_TOPOLOGY;
  *indegree = static_cast<int>(c->dist_graph->sources.size());
  *outdegree = static_cast<int>(c->dist_graph->destinations.size());
  *weighted = c->dist_graph->weighted ? 1 : 0;
  return MPI_SUCCESS;
}

int mmpi_impl_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                   int sourceweights[], int maxoutdegree, int destinations[],
                                   int destweights[]) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (!c->dist_graph) return MPI_ERR_TOPOLOGY;
  const DistGraphTopo& g = *c->dist_graph;
  if (maxindegree < 0 || maxoutdegree < 0) return MPI_ERR_ARG;
  const std::size_t in = std::min<std::size_t>(g.sources.size(), maxindegree);
  const std::size_t out = std::min<std::size_t>(g.destinations.size(), maxoutdegree);
  std::copy_n(g.sources.begin(), in, sources);
  std::copy_n(g.destinations.begin(), out, destinations);
  if (g.weighted && !is_unweighted(sourceweights) && sourceweights != nullptr)
    std::copy_n(g.source_weights.begin(), in, sourceweights);
  if (g.weighted && !is_unweighted(destweights) && destweights != nullptr)
    std::copy_n(g.dest_weights.begin(), out, destweights);
  return MPI_SUCCESS;
}

}  // extern "C"
