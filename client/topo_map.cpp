#include "topo_map.h"

#include <metis.h>

#include <algorithm>
#include <map>
#include <utility>

namespace zipper::client {

namespace {

// The undirected graph without self-loops: w({u,v}) = w(u->v) + w(v->u).
using Neighbours = std::vector<std::map<int, std::int64_t>>;

Neighbours undirected(int n, const std::vector<TopoEdge>& edges) {
  Neighbours adj(static_cast<std::size_t>(n));
  for (const TopoEdge& e : edges) {
    if (e.u == e.v || e.u < 0 || e.v < 0 || e.u >= n || e.v >= n || e.w <= 0) continue;
    adj[static_cast<std::size_t>(e.u)][e.v] += e.w;
    adj[static_cast<std::size_t>(e.v)][e.u] += e.w;
  }
  return adj;
}

// External minus internal weight of v: what moving v alone to the other part saves.
std::int64_t gain(const Neighbours& adj, const std::vector<int>& part, int v) {
  std::int64_t g = 0;
  for (const auto& [u, w] : adj[static_cast<std::size_t>(v)])
    g += part[static_cast<std::size_t>(u)] != part[static_cast<std::size_t>(v)] ? w : -w;
  return g;
}

std::int64_t binomial(int n, int k) {
  std::int64_t c = 1;
  for (int i = 1; i <= k; ++i) {
    c = c * (n - k + i) / i;
    if (c > (std::int64_t{1} << 40)) return c;
  }
  return c;
}

// Every bisection with n0 vertices in part 0; the first of least cut.
std::vector<int> exhaustive(int n, int n0, const std::vector<TopoEdge>& edges) {
  std::vector<int> pick(static_cast<std::size_t>(n0));
  for (int i = 0; i < n0; ++i) pick[static_cast<std::size_t>(i)] = i;
  std::vector<int> best, part(static_cast<std::size_t>(n));
  std::int64_t best_cut = -1;
  for (;;) {
    std::fill(part.begin(), part.end(), 1);
    for (int v : pick) part[static_cast<std::size_t>(v)] = 0;
    const std::int64_t c = cut_weight(edges, part);
    if (best_cut < 0 || c < best_cut) best_cut = c, best = part;
    int i = n0 - 1;  // next combination in lexicographic order
    while (i >= 0 && pick[static_cast<std::size_t>(i)] == n - n0 + i) --i;
    if (i < 0) break;
    ++pick[static_cast<std::size_t>(i)];
    for (int j = i + 1; j < n0; ++j)
      pick[static_cast<std::size_t>(j)] = pick[static_cast<std::size_t>(j - 1)] + 1;
  }
  return best;
}

// METIS's recursive bisection with target part weights n0/n and 1 - n0/n;
// `fallback` when METIS declines (no edges, an error).
std::vector<int> metis_bisect(int n, int n0, const Neighbours& adj, std::vector<int> fallback) {
  std::vector<idx_t> xadj{0}, adjncy, adjwgt;
  for (const auto& row : adj) {
    for (const auto& [u, w] : row) {
      adjncy.push_back(u);
      adjwgt.push_back(static_cast<idx_t>(w));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
  }
  if (adjncy.empty()) return fallback;
  idx_t nv = n, ncon = 1, nparts = 2, edgecut = 0;
  real_t tpwgts[2] = {static_cast<real_t>(n0) / n, static_cast<real_t>(n - n0) / n};
  real_t ubvec[1] = {1.001f};
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same answer on every rank
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(n));
  if (METIS_PartGraphRecursive(&nv, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr,
                               adjwgt.data(), &nparts, tpwgts, ubvec, options, &edgecut,
                               part.data()) != METIS_OK)
    return fallback;
  return std::vector<int>(part.begin(), part.end());
}

// Moves the best-gain vertices out of the part that is too large until part
// 0 holds exactly n0 (METIS balances only within its tolerance).
void fix_sizes(int n0, const Neighbours& adj, std::vector<int>& part) {
  for (;;) {
    const int have = static_cast<int>(std::count(part.begin(), part.end(), 0));
    if (have == n0) return;
    const int from = have > n0 ? 0 : 1;
    int best = -1;
    std::int64_t best_gain = 0;
    for (int v = 0; v < static_cast<int>(part.size()); ++v) {
      if (part[static_cast<std::size_t>(v)] != from) continue;
      const std::int64_t g = gain(adj, part, v);
      if (best < 0 || g > best_gain) best = v, best_gain = g;
    }
    part[static_cast<std::size_t>(best)] = 1 - from;
  }
}

// Kernighan–Lin (1970): swap the pair across the cut that saves most while
// any pair saves something. Quadratic per pass, so only for moderate n.
void refine(const Neighbours& adj, std::vector<int>& part) {
  const int n = static_cast<int>(part.size());
  if (n > 2048) return;
  for (int pass = 0; pass < 4 * n; ++pass) {
    std::vector<std::int64_t> d(static_cast<std::size_t>(n));
    for (int v = 0; v < n; ++v) d[static_cast<std::size_t>(v)] = gain(adj, part, v);
    std::int64_t best = 0;
    int ba = -1, bb = -1;
    for (int a = 0; a < n; ++a) {
      if (part[static_cast<std::size_t>(a)] != 0) continue;
      for (int b = 0; b < n; ++b) {
        if (part[static_cast<std::size_t>(b)] != 1) continue;
        const auto& row = adj[static_cast<std::size_t>(a)];
        const auto it = row.find(b);
        const std::int64_t g = d[static_cast<std::size_t>(a)] + d[static_cast<std::size_t>(b)] -
                               2 * (it == row.end() ? 0 : it->second);
        if (g > best) best = g, ba = a, bb = b;
      }
    }
    if (ba < 0) return;
    std::swap(part[static_cast<std::size_t>(ba)], part[static_cast<std::size_t>(bb)]);
  }
}

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

  std::vector<int> part;
  if (binomial(n, n0) <= opt.exhaustive_limit) {
    part = exhaustive(n, n0, edges);
  } else {
    const Neighbours adj = undirected(n, edges);
    part = metis_bisect(n, n0, adj, cluster);
    fix_sizes(n0, adj, part);
    refine(adj, part);
  }
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
