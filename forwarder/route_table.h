// Routes over a graph of bridge nodes: sites are the vertices, each bridge
// node a hyperedge joining the sites it has a leg on, every leg with a cost.
// A bridge computes, for each destination site, where a frame goes next:
// out of one of its own legs (the site is one it joins), or over one of its
// legs to a peer bridge on that leg's site network, which goes on from there.
//
// Cost of a path: crossing a site's network from bridge X to bridge Y costs
// X's leg cost on that site plus Y's; delivery at the last bridge Z costs Z's
// leg cost on the destination site. Routes are the cheapest paths (Dijkstra
// over bridges); every first hop of a cheapest path is kept, so traffic can
// be striped over equal-cost routes. Hops count the bridges a frame crosses,
// this one included (1: a local leg). A bridge marked down is left out, and
// routes are computed again (RouteTable::compute on the changed graph), as
// LNet drops a dead router from its routes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zipper::forwarder {

/// Sites a deployment may name (the wire's limit, proto/site_hello.h).
inline constexpr int kMaxRouteSites = 64;

/// One leg of a bridge node: the site index (0-based, the jobs' site order)
/// and its cost (>= 1; unitless, e.g. microseconds of latency).
struct BridgeLeg {
  int site = 0;
  std::uint32_t cost = 1;
};

/// A bridge node of the graph: its name (for logs, e.g. "B|C"), its legs
/// (distinct sites), and whether it is up.
struct BridgeNode {
  std::string name;
  std::vector<BridgeLeg> legs;
  bool up = true;
  /// The cost of the leg on `site`, nullopt when the bridge has none there.
  std::optional<std::uint32_t> leg_cost(int site) const;
};

/// Where a frame for a site goes next from this bridge: out of this bridge's
/// own leg on `site` (peer = -1), or over that leg's site network to the
/// peer bridge `peer` (an index into the graph).
struct NextHop {
  int site = 0;
  int peer = -1;
  bool local() const { return peer < 0; }
  bool operator==(const NextHop&) const = default;
};

/// The route to one destination site: every equal-cost first hop (ordered
/// by peer index, then site), the fewest hops among those paths, and the
/// cost.
struct Route {
  int dest_site = 0;
  std::uint32_t hops = 0;
  std::uint64_t cost = 0;
  std::vector<NextHop> next;
};

class RouteTable {
 public:
  /// Routes from bridge `self` (index into `graph`) to every site of
  /// [0, sites). Throws std::invalid_argument naming the fault for `self`
  /// out of range or down, `sites` outside 1..kMaxRouteSites, a leg on a
  /// site outside the table or of cost 0, or a bridge with two legs on one
  /// site.
  static RouteTable compute(const std::vector<BridgeNode>& graph, int self, int sites);

  /// The route to `site`, or nullptr when none (no bridge up joins it to
  /// this one, or `site` is outside the table).
  const Route* find(int site) const;
  /// One of the route's equal-cost next hops for a stream keyed by `key`
  /// (e.g. the source rank): the same key always takes the same hop, so a
  /// stream's frames stay in order, and keys spread over every hop.
  /// nullptr when there is no route.
  const NextHop* pick(int site, std::uint64_t key) const;
  /// One line saying why there is no route to `site` (for a refusal),
  /// naming the site from `site_names` where it has one.
  std::string no_route(int site, const std::vector<std::string>& site_names = {}) const;
  /// Every route, by destination site (sites without a route left out).
  const std::vector<Route>& routes() const { return routes_; }
  int sites() const { return sites_; }
  const std::vector<BridgeNode>& graph() const { return graph_; }
  int self() const { return self_; }
  /// "leg C" or "bridge B|C over site B" (site names from `site_names`,
  /// indices where it is shorter).
  std::string describe(const NextHop& hop, const std::vector<std::string>& site_names) const;

 private:
  std::vector<BridgeNode> graph_;
  int self_ = 0;
  int sites_ = 0;
  std::vector<Route> routes_;
  std::vector<int> index_;  // site -> position in routes_, -1 when none
};

}  // namespace zipper::forwarder
