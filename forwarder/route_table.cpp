// Route computation over the bridge graph (route_table.h).
#include "route_table.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace zipper::forwarder {

namespace {

constexpr std::uint64_t kInf = std::numeric_limits<std::uint64_t>::max();

void merge(std::vector<NextHop>& into, const std::vector<NextHop>& from) {
  for (const auto& h : from)
    if (std::find(into.begin(), into.end(), h) == into.end()) into.push_back(h);
}

std::string site_text(int site, const std::vector<std::string>& names) {
  if (site >= 0 && static_cast<std::size_t>(site) < names.size()) return names[site];
  return std::to_string(site);
}

}  // namespace

std::optional<std::uint32_t> BridgeNode::leg_cost(int site) const {
  for (const auto& l : legs)
    if (l.site == site) return l.cost;
  return std::nullopt;
}

RouteTable RouteTable::compute(const std::vector<BridgeNode>& graph, int self, int sites) {
  if (sites < 1 || sites > kMaxRouteSites)
    throw std::invalid_argument("route table: " + std::to_string(sites) + " sites; it takes 1.." +
                                std::to_string(kMaxRouteSites));
  if (self < 0 || static_cast<std::size_t>(self) >= graph.size())
    throw std::invalid_argument("route table: this bridge (" + std::to_string(self) +
                                ") is not in the graph of " + std::to_string(graph.size()));
  if (!graph[self].up)
    throw std::invalid_argument("route table: this bridge " + graph[self].name + " is down");
  for (const auto& b : graph) {
    std::vector<bool> seen(static_cast<std::size_t>(sites), false);
    for (const auto& l : b.legs) {
      if (l.site < 0 || l.site >= sites)
        throw std::invalid_argument("route table: bridge " + b.name + " has a leg on site " +
                                    std::to_string(l.site) + ", outside the " +
                                    std::to_string(sites) + " sites");
      if (l.cost == 0)
        throw std::invalid_argument("route table: bridge " + b.name + "'s leg on site " +
                                    std::to_string(l.site) + " costs 0 (costs are >= 1)");
      if (seen[l.site])
        throw std::invalid_argument("route table: bridge " + b.name + " has two legs on site " +
                                    std::to_string(l.site));
      seen[l.site] = true;
    }
  }

  // Dijkstra over the bridges that are up, keeping every equal-cost first hop.
  const std::size_t n = graph.size();
  std::vector<std::uint64_t> dist(n, kInf);
  std::vector<std::uint32_t> hops(n, 0);
  std::vector<std::vector<NextHop>> first(n);
  std::vector<bool> done(n, false);
  dist[self] = 0;
  hops[self] = 1;
  for (;;) {
    std::size_t x = n;
    for (std::size_t i = 0; i < n; ++i)
      if (!done[i] && dist[i] != kInf && (x == n || dist[i] < dist[x])) x = i;
    if (x == n) break;
    done[x] = true;
    for (std::size_t y = 0; y < n; ++y) {
      if (y == x || done[y] || !graph[y].up) continue;
      for (const auto& l : graph[x].legs) {
        const auto c = graph[y].leg_cost(l.site);
        if (!c) continue;
        const std::uint64_t cand = dist[x] + l.cost + *c;
        const std::vector<NextHop> fh =
            static_cast<int>(x) == self ? std::vector<NextHop>{NextHop{l.site, static_cast<int>(y)}}
                                        : first[x];
        if (cand < dist[y]) {
          dist[y] = cand;
          hops[y] = hops[x] + 1;
          first[y] = fh;
        } else if (cand == dist[y]) {
          hops[y] = std::min(hops[y], hops[x] + 1);
          merge(first[y], fh);
        }
      }
    }
  }

  RouteTable t;
  t.graph_ = graph;
  t.self_ = self;
  t.sites_ = sites;
  t.index_.assign(static_cast<std::size_t>(sites), -1);
  for (int d = 0; d < sites; ++d) {
    Route r;
    r.dest_site = d;
    r.cost = kInf;
    for (std::size_t z = 0; z < n; ++z) {
      if (dist[z] == kInf) continue;
      const auto c = graph[z].leg_cost(d);
      if (!c) continue;
      const std::uint64_t cost = dist[z] + *c;
      const std::vector<NextHop> fh =
          static_cast<int>(z) == self ? std::vector<NextHop>{NextHop{d, -1}} : first[z];
      if (cost < r.cost) {
        r.cost = cost;
        r.hops = hops[z];
        r.next = fh;
      } else if (cost == r.cost) {
        r.hops = std::min(r.hops, hops[z]);
        merge(r.next, fh);
      }
    }
    if (r.cost == kInf) continue;
    std::sort(r.next.begin(), r.next.end(), [](const NextHop& a, const NextHop& b) {
      return a.peer != b.peer ? a.peer < b.peer : a.site < b.site;
    });
    t.index_[d] = static_cast<int>(t.routes_.size());
    t.routes_.push_back(std::move(r));
  }
  return t;
}

const Route* RouteTable::find(int site) const {
  if (site < 0 || site >= sites_ || index_[site] < 0) return nullptr;
  return &routes_[static_cast<std::size_t>(index_[site])];
}

const NextHop* RouteTable::pick(int site, std::uint64_t key) const {
  const Route* r = find(site);
  if (!r || r->next.empty()) return nullptr;
  // splitmix64's finaliser: consecutive ranks spread over the hops.
  std::uint64_t z = key + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return &r->next[z % r->next.size()];
}

std::string RouteTable::no_route(int site, const std::vector<std::string>& site_names) const {
  const std::string head =
      "no route from " +
      (graph_.empty() ? std::string("this bridge")
                      : "bridge " + graph_[static_cast<std::size_t>(self_)].name) +
      " to site " + site_text(site, site_names) + ": ";
  if (site < 0 || site >= sites_)
    return head + "the deployment has " + std::to_string(sites_) + " sites";
  int joined = 0, up = 0;
  for (const auto& b : graph_)
    if (b.leg_cost(site)) {
      ++joined;
      up += b.up ? 1 : 0;
    }
  if (joined == 0) return head + "no bridge in the configuration has a leg on it";
  if (up == 0) return head + "all " + std::to_string(joined) + " bridges with a leg on it are down";
  return head + "the " + std::to_string(up) +
         " bridges up with a leg on it are not reachable from here";
}

std::string RouteTable::describe(const NextHop& hop,
                                 const std::vector<std::string>& site_names) const {
  if (hop.local()) return "leg " + site_text(hop.site, site_names);
  return "bridge " + graph_[static_cast<std::size_t>(hop.peer)].name + " over site " +
         site_text(hop.site, site_names);
}

}  // namespace zipper::forwarder
