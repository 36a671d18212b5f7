#include "topo_reorder.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

namespace zipper::capi {

int reordered_rank(const client::Runtime& rt, const client::Comm& c, int n,
                   const std::vector<client::TopoEdge>& edges, bool reorder, int rank,
                   const char* what) {
  if (rank >= n) return MPI_UNDEFINED;
  if (!reorder) return rank;
  // The mapping is a bisection (client/topo_map.h): a job of more sites
  // keeps the application's order.
  const client::SiteMap& sites = rt.sites();
  if (sites.sites() > 2) return rank;
  // Site (0 or 1) of each of the first n members, the same on every rank.
  std::vector<int> cluster(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p)
    cluster[static_cast<std::size_t>(p)] = sites.site_of(c.map().world(p));
  const client::TopoMapResult m = client::map_to_clusters(n, edges, cluster);
  if (rank == 0 && rt.settings().calls.debug_log) {
    const int x = static_cast<int>(std::count(cluster.begin(), cluster.end(), 0));
    std::fprintf(stderr,
                 "mmpi[rank %d]: debug: %s reorder at %d+%d: edge weight across the clusters "
                 "%lld before, %lld after\n",
                 rt.rank(), what, x, n - x, static_cast<long long>(m.cut_before),
                 static_cast<long long>(m.cut_after));
  }
  return m.vertex[static_cast<std::size_t>(rank)];
}

std::vector<client::TopoEdge> cart_edges(const client::Cart& cart) {
  std::vector<client::TopoEdge> e;
  for (int r = 0; r < cart.size(); ++r)
    for (int d = 0; d < cart.ndims(); ++d) {
      const auto [src, dst] = cart.shift(r, d, 1, -1);
      if (src >= 0) e.push_back({r, src, 1});
      if (dst >= 0) e.push_back({r, dst, 1});
    }
  return e;
}

}  // namespace zipper::capi
