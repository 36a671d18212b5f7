// zipperd's site graph from its configuration (forwarder/bridge_map.h):
// --peer and --peer-key parsing, site names, legs, and the refusals.
#include <gtest/gtest.h>

#include <stdexcept>

#include "forwarder/bridge_map.h"

namespace {

using namespace zipper::forwarder;

const std::string kKey(64, 'a');  // 64 hex digits: a well-formed public key

std::vector<PeerSpec> peers(const std::vector<std::string>& texts,
                            const std::vector<std::string>& keys = {}) {
  std::vector<PeerSpec> out;
  std::string why;
  for (const auto& t : texts) {
    auto p = parse_peer(t, &why);
    if (!p) throw std::runtime_error(why);
    out.push_back(*p);
  }
  for (const auto& k : keys)
    if (!pin_peer_key(k, out, &why)) throw std::runtime_error(why);
  return out;
}

std::string refusal(const std::vector<std::string>& legs, const std::vector<std::string>& sites,
                    const std::vector<PeerSpec>& p) {
  try {
    make_bridge_map(legs, sites, p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(BridgeMap, PeerParsing) {
  std::string why;
  auto p = parse_peer("B:3|C=127.0.0.1:7480", &why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->name, "B:3|C");
  ASSERT_EQ(p->legs.size(), 2u);
  EXPECT_EQ(p->legs[0].site, "B");
  EXPECT_EQ(p->legs[0].cost, 3u);
  EXPECT_EQ(p->legs[1].cost, 1u);
  ASSERT_TRUE(p->endpoint);
  EXPECT_EQ(p->endpoint->port, 7480);
  p = parse_peer("C|D", &why);
  ASSERT_TRUE(p) << why;
  EXPECT_FALSE(p->endpoint);

  EXPECT_FALSE(parse_peer("B=127.0.0.1:1", &why));
  EXPECT_EQ(why,
            "peer 'B=127.0.0.1:1': a bridge has legs on two sites or more (e.g. "
            "B|C=HOST:PORT)");
  EXPECT_FALSE(parse_peer("B|B=127.0.0.1:1", &why));
  EXPECT_EQ(why, "peer 'B|B=127.0.0.1:1' names site B twice");
  EXPECT_FALSE(parse_peer("B:0|C", &why));
  EXPECT_EQ(why, "peer 'B:0|C': leg cost '0' is not a whole number in 1..1000000");
  EXPECT_FALSE(parse_peer("B:x|C", &why));
  EXPECT_FALSE(parse_peer("|C", &why));
  EXPECT_EQ(why, "peer '|C': a leg without a site name (expected SITE[:COST]|SITE...)");
  EXPECT_FALSE(parse_peer("B|C=nowhere", &why));
  EXPECT_EQ(why.rfind("peer 'B|C=nowhere': ", 0), 0u) << why;

  auto ps = peers({"B|C=127.0.0.1:1"});
  EXPECT_FALSE(pin_peer_key("C|D=" + kKey, ps, &why));
  EXPECT_EQ(why, "peer key for C|D: no --peer C|D is given");
  EXPECT_FALSE(pin_peer_key("B|C=abc", ps, &why));
  EXPECT_EQ(why.rfind("peer key for B|C: ", 0), 0u) << why;
  EXPECT_FALSE(pin_peer_key("B|C", ps, &why));
  EXPECT_TRUE(pin_peer_key("B|C=" + kKey, ps, &why)) << why;
  EXPECT_TRUE(ps[0].host_key);
}

TEST(BridgeMap, ChainBridgeRoutesTheFarSite) {
  // Bridge A|B of the chain A - B - C, peered with B|C over site B.
  const auto m =
      make_bridge_map({"A", "B"}, {"A", "B", "C"}, peers({"B|C=127.0.0.1:7480"}, {"B|C=" + kKey}));
  EXPECT_TRUE(m->has_peers());
  EXPECT_EQ(m->leg_of_site, (std::vector<int>{0, 1, -1}));
  const Route* c = m->routes.find(2);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->hops, 2u);
  EXPECT_EQ(m->next_hops_text(*c), "bridge B|C over site B");
  EXPECT_EQ(m->next_hops_text(*m->routes.find(0)), "leg A");
  EXPECT_EQ(m->routes.graph()[0].name, "A|B");
}

TEST(BridgeMap, SiteNamesMapLegsOutOfOrder) {
  // Listeners C then B; the jobs' site 0 is B, so its leg is listener 1.
  const auto m = make_bridge_map({"C", "B"}, {"B", "C"}, {});
  EXPECT_EQ(m->leg_of_site, (std::vector<int>{1, 0}));
  EXPECT_FALSE(m->has_peers());
  // Without names, listener s is the leg of site s (the star, two sites).
  EXPECT_EQ(make_bridge_map({"A", "B", "C"}, {}, {})->leg_of_site, (std::vector<int>{0, 1, 2}));
}

TEST(BridgeMap, BadGraphsAreRefused) {
  EXPECT_EQ(refusal({"A", "X"}, {"A", "B"}, {}),
            "listener X is the leg of no site in --site-names");
  EXPECT_EQ(refusal({"A"}, {"A", "B", "A"}, {}), "site names: A is given twice");
  EXPECT_EQ(refusal({"A", "B"}, {"A", "B"}, peers({"B|Z=127.0.0.1:1"}, {"B|Z=" + kKey})),
            "peer B|Z has a leg on site Z, which --site-names does not name");
  EXPECT_EQ(refusal({"A", "B"}, {"A", "B", "C"}, peers({"B|C"})),
            "peer B|C shares a site with this bridge: give its address (--peer B|C=HOST:PORT)");
  EXPECT_EQ(refusal({"A", "B"}, {"A", "B", "C"}, peers({"B|C=127.0.0.1:1"})),
            "peer B|C shares a site with this bridge: pin its host key (--peer-key B|C=HEX)");
  EXPECT_EQ(refusal({"A", "B"}, {"A", "B", "C"},
                    peers({"B|C=127.0.0.1:1", "B|C=127.0.0.1:2"}, {"B|C=" + kKey})),
            "peer B|C is given twice");
  // A bridge further away needs neither address nor key.
  EXPECT_EQ(
      refusal({"A", "B"}, {"A", "B", "C", "D"}, peers({"B|C=127.0.0.1:1", "C|D"}, {"B|C=" + kKey})),
      "accepted");
}

}  // namespace

#include "forwarder/daemon_config.h"

namespace {

std::string load_error(const zipper::forwarder::CommandLine& cli) {
  try {
    zipper::forwarder::load("", cli);
  } catch (const zipper::forwarder::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(BridgeMap, FlagsBuildTheGraph) {
  using zipper::forwarder::CommandLine;
  const CommandLine chain{{"--listen", {"A=127.0.0.1:1", "B=127.0.0.1:2"}},
                          {"--site-names", {"A,B,C"}},
                          {"--peer-key", {"B|C=" + kKey}},  // before its --peer: still pinned
                          {"--peer", {"B|C=127.0.0.1:3"}}};
  auto cfg = zipper::forwarder::load("", chain);
  ASSERT_EQ(cfg.forwarder.peers.size(), 1u);
  EXPECT_TRUE(cfg.forwarder.peers[0].host_key);
  EXPECT_EQ(cfg.forwarder.site_names, (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ(zipper::forwarder::value_of(cfg, "routes.peers"), "B|C=tcp:127.0.0.1:3");
  zipper::forwarder::check_config(cfg.forwarder);
  ASSERT_TRUE(cfg.forwarder.bridges);
  EXPECT_EQ(cfg.forwarder.bridges->routes.find(2)->hops, 2u);

  auto unpinned = chain;
  unpinned.erase("--peer-key");
  EXPECT_EQ(load_error(unpinned),
            "routes: peer B|C shares a site with this bridge: pin its host key (--peer-key "
            "B|C=HEX)");
  auto stray = chain;
  stray["--peer-key"] = {"C|D=" + kKey};
  EXPECT_EQ(load_error(stray), "--peer-key: peer key for C|D: no --peer C|D is given");
  auto bad = chain;
  bad["--peer"] = {"B"};
  EXPECT_EQ(load_error(bad),
            "--peer: peer 'B': a bridge has legs on two sites or more (e.g. B|C=HOST:PORT)");
}

}  // namespace
