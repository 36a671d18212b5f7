// This bridge's view of the site graph, from its configuration: the
// deployment's site names in the jobs' site order, its own legs, and the
// other bridge nodes (peers), each named by its legs ("B|C", with a cost
// per leg where not 1: "B:3|C"). From these comes the route table
// (route_table.h) and which listener is the leg of which site.
//
//   zipperd --listen A=10.201.0.254:7470 --listen B=10.202.0.254:7470
//           --site-names A,B,C --peer 'B|C=10.202.0.253:7470' --peer-key 'B|C=HEX'
//
// A peer with a leg on a site this bridge also joins is adjacent: it is
// reached over that site's network at its address, and its host key must be
// pinned (--peer-key), as ranks pin zipperd's (docs/security.md). A peer
// further away needs neither: it only tells the route computation where the
// graph goes on.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../proto/auth.h"
#include "../proto/link.h"
#include "route_table.h"

namespace zipper::forwarder {

/// One --peer (and its --peer-key): a bridge node of the site graph.
struct PeerSpec {
  std::string name;  // as given, e.g. "B|C" or "B:3|C"
  struct Leg {
    std::string site;
    std::uint32_t cost = 1;
  };
  std::vector<Leg> legs;
  std::optional<proto::Endpoint> endpoint;   // where it listens on a shared site's network
  std::optional<proto::auth::Key> host_key;  // its pinned public host key
};

/// Parses "LEGS[=ADDRESS]" (LEGS: SITE[:COST] joined by '|', at least two,
/// COST 1..1000000). nullopt and *why naming the fault otherwise.
std::optional<PeerSpec> parse_peer(const std::string& text, std::string* why);
/// Parses "LEGS=HEX" (--peer-key) and pins the key on the peer of that name
/// in `peers`; false and *why when no such peer or a bad key.
bool pin_peer_key(const std::string& text, std::vector<PeerSpec>& peers, std::string* why);

struct BridgeMap {
  std::vector<std::string> site_names;  // site index -> name
  std::vector<int> leg_of_site;         // site index -> listener index, -1: no leg here
  std::vector<PeerSpec> peers;          // graph index i + 1 is peers[i] (0 is this bridge)
  RouteTable routes;
  /// True when peers were configured: routes decide which job layouts this
  /// bridge can serve (without peers, legs are sites as in the star).
  bool has_peers() const { return !peers.empty(); }
  std::string site_name(int site) const;
  /// The route's next hops in words ("leg C", "bridge B|C over site B").
  std::string next_hops_text(const Route& r) const;
};

/// Builds the map: `site_names` empty means the listeners' names in order
/// (each listener the leg of the site of its index). Throws
/// std::invalid_argument naming the fault: a listener or peer leg naming a
/// site outside `site_names`, a peer given twice or naming one site twice,
/// an adjacent peer without address or pinned key, more than 64 sites.
std::shared_ptr<const BridgeMap> make_bridge_map(const std::vector<std::string>& leg_names,
                                                 const std::vector<std::string>& site_names,
                                                 const std::vector<PeerSpec>& peers);

}  // namespace zipper::forwarder
