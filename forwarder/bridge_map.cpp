// The site graph from zipperd's configuration (bridge_map.h).
#include "bridge_map.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "../proto/host_key.h"

namespace zipper::forwarder {

namespace {

constexpr std::uint32_t kMaxLegCost = 1000000;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (;;) {
    const auto e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return out;
    b = e + 1;
  }
}

int index_of(const std::vector<std::string>& v, const std::string& s) {
  const auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}

}  // namespace

std::optional<PeerSpec> parse_peer(const std::string& text, std::string* why) {
  PeerSpec p;
  const auto eq = text.find('=');
  p.name = text.substr(0, eq);
  for (const auto& leg : split(p.name, '|')) {
    PeerSpec::Leg l;
    const auto colon = leg.find(':');
    l.site = leg.substr(0, colon);
    if (l.site.empty()) {
      *why = "peer '" + text + "': a leg without a site name (expected SITE[:COST]|SITE...)";
      return std::nullopt;
    }
    if (colon != std::string::npos) {
      const std::string c = leg.substr(colon + 1);
      std::uint32_t v = 0;
      const auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
      if (ec != std::errc() || end != c.data() + c.size() || v < 1 || v > kMaxLegCost) {
        *why = "peer '" + text + "': leg cost '" + c + "' is not a whole number in 1.." +
               std::to_string(kMaxLegCost);
        return std::nullopt;
      }
      l.cost = v;
    }
    for (const auto& o : p.legs)
      if (o.site == l.site) {
        *why = "peer '" + text + "' names site " + l.site + " twice";
        return std::nullopt;
      }
    p.legs.push_back(l);
  }
  if (p.legs.size() < 2) {
    *why = "peer '" + text + "': a bridge has legs on two sites or more (e.g. B|C=HOST:PORT)";
    return std::nullopt;
  }
  if (eq != std::string::npos) {
    std::string w;
    p.endpoint = proto::parse_endpoint(text.substr(eq + 1), &w);
    if (!p.endpoint) {
      *why = "peer '" + text + "': " + w;
      return std::nullopt;
    }
  }
  return p;
}

bool pin_peer_key(const std::string& text, std::vector<PeerSpec>& peers, std::string* why) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    *why = "peer key '" + text + "': expected LEGS=HEX (e.g. B|C=<64 hex digits>)";
    return false;
  }
  const std::string name = text.substr(0, eq);
  for (auto& p : peers)
    if (p.name == name) {
      std::string w;
      p.host_key = proto::auth::parse_public_key(text.substr(eq + 1), &w);
      if (!p.host_key) {
        *why = "peer key for " + name + ": " + w;
        return false;
      }
      return true;
    }
  *why = "peer key for " + name + ": no --peer " + name + " is given";
  return false;
}

std::string BridgeMap::site_name(int site) const {
  return site >= 0 && static_cast<std::size_t>(site) < site_names.size() ? site_names[site]
                                                                         : std::to_string(site);
}

std::string BridgeMap::next_hops_text(const Route& r) const {
  std::string out;
  for (const auto& h : r.next) out += (out.empty() ? "" : ", ") + routes.describe(h, site_names);
  return out;
}

std::shared_ptr<const BridgeMap> make_bridge_map(const std::vector<std::string>& leg_names,
                                                 const std::vector<std::string>& site_names,
                                                 const std::vector<PeerSpec>& peers) {
  auto m = std::make_shared<BridgeMap>();
  m->site_names = site_names.empty() ? leg_names : site_names;
  if (m->site_names.empty()) throw std::invalid_argument("bridge map: no site and no leg");
  if (m->site_names.size() > static_cast<std::size_t>(kMaxRouteSites))
    throw std::invalid_argument("site names: " + std::to_string(m->site_names.size()) +
                                " sites; at most " + std::to_string(kMaxRouteSites));
  for (std::size_t i = 0; i < m->site_names.size(); ++i)
    if (index_of(m->site_names, m->site_names[i]) != static_cast<int>(i))
      throw std::invalid_argument("site names: " + m->site_names[i] + " is given twice");
  const int n = static_cast<int>(m->site_names.size());

  BridgeNode self;
  self.name = "this bridge";
  m->leg_of_site.assign(static_cast<std::size_t>(n), -1);
  std::string own;
  for (std::size_t l = 0; l < leg_names.size(); ++l) {
    const int s = index_of(m->site_names, leg_names[l]);
    if (s < 0)
      throw std::invalid_argument("listener " + leg_names[l] +
                                  " is the leg of no site in --site-names");
    m->leg_of_site[s] = static_cast<int>(l);
    self.legs.push_back({s, 1});
    own += (own.empty() ? "" : "|") + leg_names[l];
  }
  self.name = own;
  std::vector<BridgeNode> graph{self};
  for (const auto& p : peers) {
    for (const auto& o : m->peers)
      if (o.name == p.name) throw std::invalid_argument("peer " + p.name + " is given twice");
    BridgeNode b;
    b.name = p.name;
    bool adjacent = false;
    for (const auto& l : p.legs) {
      const int s = index_of(m->site_names, l.site);
      if (s < 0)
        throw std::invalid_argument("peer " + p.name + " has a leg on site " + l.site +
                                    ", which --site-names does not name");
      b.legs.push_back({s, l.cost});
      adjacent = adjacent || m->leg_of_site[s] >= 0;
    }
    if (adjacent && !p.endpoint)
      throw std::invalid_argument("peer " + p.name +
                                  " shares a site with this bridge: give its address (--peer " +
                                  p.name + "=HOST:PORT)");
    if (adjacent && !p.host_key)
      throw std::invalid_argument("peer " + p.name +
                                  " shares a site with this bridge: pin its host key (--peer-key " +
                                  p.name + "=HEX)");
    graph.push_back(std::move(b));
    m->peers.push_back(p);
  }
  m->routes = RouteTable::compute(graph, 0, n);
  return m;
}

}  // namespace zipper::forwarder
