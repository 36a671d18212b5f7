#include "topo_map.h"

#include <algorithm>
#include <utility>

#include "place/placement.h"

namespace zipper::client {

namespace {

int agreement(const std::vector<int>& part, const std::vector<int>& cluster) {
  int same = 0;
  for (std::size_t v = 0; v < part.size(); ++v) same += part[v] == cluster[v];
  return same;
}

}  // namespace

std::int64_t cut_weight(const std::vector<TopoEdge>& edges, const std::vector<int>& part) {
  const int n = static_cast<int>(part.size());
  std::int64_t c = 0;
  for (const TopoEdge& e : edges)
    if (e.u >= 0 && e.v >= 0 && e.u < n && e.v < n &&
        part[static_cast<std::size_t>(e.u)] != part[static_cast<std::size_t>(e.v)])
      c += e.w;
  return c;
}

TopoMapResult map_to_clusters(int n, const std::vector<TopoEdge>& edges,
                              const std::vector<int>& cluster, const TopoMapOptions& opt) {
  TopoMapResult res;
  res.vertex.resize(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) res.vertex[static_cast<std::size_t>(p)] = p;
  res.cut_before = res.cut_after = cut_weight(edges, cluster);
  const int n0 = static_cast<int>(std::count(cluster.begin(), cluster.end(), 0));
  if (n0 == 0 || n0 == n || res.cut_before == 0) return res;

  // The cut weight is the model's time with a latency of 0 and a gap of 1
  // per unit of weight: the placement partitioner minimises exactly it.
  place::Machine machine({n0, n - n0}, place::LinkCost{0, 1});
  std::vector<place::Traffic> traffic;
  for (const TopoEdge& e : edges)
    if (e.u != e.v && e.u >= 0 && e.v >= 0 && e.u < n && e.v < n && e.w > 0)
      traffic.push_back({e.u, e.v, static_cast<std::uint64_t>(e.w), 0});
  place::PlaceOptions po;
  po.exhaustive_limit = opt.exhaustive_limit;
  po.start = cluster;
  std::vector<int> part = place::place(machine, traffic, po).site_of;
  // With equal parts, the mirror image cuts the same: take the one closer to identity.
  if (2 * n0 == n) {
    std::vector<int> mirror(part);
    for (int& x : mirror) x = 1 - x;
    if (agreement(mirror, cluster) > agreement(part, cluster)) part = std::move(mirror);
  }
  const std::int64_t after = cut_weight(edges, part);
  if (after >= res.cut_before) return res;  // never worse than the identity order

  // Vertices whose own process is in their part's cluster stay; the others
  // fill the remaining processes of that cluster in ascending order.
  std::vector<int> todo[2], free_procs[2];
  for (int v = 0; v < n; ++v) {
    const int c = part[static_cast<std::size_t>(v)];
    if (cluster[static_cast<std::size_t>(v)] == c) {
      res.vertex[static_cast<std::size_t>(v)] = v;
    } else {
      todo[c].push_back(v);
      free_procs[cluster[static_cast<std::size_t>(v)]].push_back(v);
    }
  }
  for (int c = 0; c < 2; ++c)
    for (std::size_t i = 0; i < todo[c].size(); ++i)
      res.vertex[static_cast<std::size_t>(free_procs[c][i])] = todo[c][i];
  res.cut_after = after;
  return res;
}

}  // namespace zipper::client
