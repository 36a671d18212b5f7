// Route computation over the bridge graph (forwarder/route_table.h): chain,
// star, ring, a bridge removed, equal-cost striping, no route, bad graphs.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "forwarder/route_table.h"

namespace {

using zipper::forwarder::BridgeLeg;
using zipper::forwarder::BridgeNode;
using zipper::forwarder::NextHop;
using zipper::forwarder::RouteTable;

constexpr int A = 0, B = 1, C = 2, D = 3;

BridgeNode bridge(std::string name, std::vector<BridgeLeg> legs) {
  return BridgeNode{std::move(name), std::move(legs), true};
}

TEST(RouteTable, ChainRelaysTheFarSiteToTheNextBridge) {
  // A - B - C, bridges A|B (0) and B|C (1).
  const std::vector<BridgeNode> g{bridge("A|B", {{A, 1}, {B, 1}}), bridge("B|C", {{B, 1}, {C, 1}})};
  const auto t = RouteTable::compute(g, 0, 3);
  ASSERT_NE(t.find(A), nullptr);
  EXPECT_EQ(t.find(A)->next, (std::vector<NextHop>{{A, -1}}));
  EXPECT_EQ(t.find(A)->hops, 1u);
  EXPECT_EQ(t.find(A)->cost, 1u);
  EXPECT_EQ(t.find(B)->next, (std::vector<NextHop>{{B, -1}}));
  const auto* c = t.find(C);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->next, (std::vector<NextHop>{{B, 1}}));  // bridge B|C over site B
  EXPECT_EQ(c->hops, 2u);
  EXPECT_EQ(c->cost, 3u);  // A|B's leg B + B|C's leg B + B|C's leg C
  EXPECT_EQ(t.describe(c->next[0], {"A", "B", "C"}), "bridge B|C over site B");
  EXPECT_EQ(t.describe(t.find(A)->next[0], {"A", "B", "C"}), "leg A");
  // And from the other end.
  const auto u = RouteTable::compute(g, 1, 3);
  EXPECT_EQ(u.find(A)->next, (std::vector<NextHop>{{B, 0}}));
  EXPECT_EQ(u.find(A)->hops, 2u);
}

TEST(RouteTable, LongerChainCountsEveryBridge) {
  // A - B - C - D, bridges A|B, B|C, C|D: from A|B, D is 3 bridges away and
  // the first hop is still B|C.
  const std::vector<BridgeNode> g{bridge("A|B", {{A, 1}, {B, 1}}), bridge("B|C", {{B, 1}, {C, 1}}),
                                  bridge("C|D", {{C, 1}, {D, 1}})};
  const auto t = RouteTable::compute(g, 0, 4);
  const auto* d = t.find(D);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->hops, 3u);
  EXPECT_EQ(d->cost, 5u);
  EXPECT_EQ(d->next, (std::vector<NextHop>{{B, 1}}));
}

TEST(RouteTable, StarIsEveryLegLocal) {
  const std::vector<BridgeNode> g{bridge("A|B|C", {{A, 1}, {B, 1}, {C, 1}})};
  const auto t = RouteTable::compute(g, 0, 3);
  ASSERT_EQ(t.routes().size(), 3u);
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(t.find(s)->next, (std::vector<NextHop>{{s, -1}}));
    EXPECT_EQ(t.find(s)->hops, 1u);
  }
}

TEST(RouteTable, RingTakesTheCheaperWayRound) {
  // Ring A - B - C - D - A, bridges A|B, B|C, C|D, D|A; B|C's leg on C is
  // dear, so from A|B site C goes the other way round... only if cheaper.
  std::vector<BridgeNode> g{bridge("A|B", {{A, 1}, {B, 1}}), bridge("B|C", {{B, 1}, {C, 10}}),
                            bridge("C|D", {{C, 1}, {D, 1}}), bridge("D|A", {{D, 1}, {A, 1}})};
  auto t = RouteTable::compute(g, 0, 4);
  // Via B|C: 1+1+10 = 12; via D|A then C|D: (1+1)+(1+1)+1 = 5.
  EXPECT_EQ(t.find(C)->next, (std::vector<NextHop>{{A, 3}}));
  EXPECT_EQ(t.find(C)->hops, 3u);
  EXPECT_EQ(t.find(C)->cost, 5u);
  EXPECT_EQ(t.find(D)->next, (std::vector<NextHop>{{A, 3}}));
  EXPECT_EQ(t.find(D)->hops, 2u);
  // With even costs the direct bridge wins.
  g[1].legs[1].cost = 1;
  t = RouteTable::compute(g, 0, 4);
  EXPECT_EQ(t.find(C)->next, (std::vector<NextHop>{{B, 1}}));
  EXPECT_EQ(t.find(C)->hops, 2u);
}

TEST(RouteTable, BridgeRemovedRoutesAroundIt) {
  std::vector<BridgeNode> g{bridge("A|B", {{A, 1}, {B, 1}}), bridge("B|C", {{B, 1}, {C, 1}}),
                            bridge("C|D", {{C, 1}, {D, 1}}), bridge("D|A", {{D, 1}, {A, 1}})};
  EXPECT_EQ(RouteTable::compute(g, 0, 4).find(C)->next, (std::vector<NextHop>{{B, 1}}));
  g[1].up = false;  // B|C killed
  const auto t = RouteTable::compute(g, 0, 4);
  const auto* c = t.find(C);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->next, (std::vector<NextHop>{{A, 3}}));  // D|A over site A, then C|D
  EXPECT_EQ(c->hops, 3u);
  EXPECT_EQ(c->cost, 5u);
  // No route uses the dead bridge.
  for (const auto& r : t.routes())
    for (const auto& h : r.next) EXPECT_NE(h.peer, 1);
}

TEST(RouteTable, EqualCostRoutesAreAllKeptAndStriped) {
  // Two bridges between B and C (B|C#1, B|C#2): both are first hops to C.
  const std::vector<BridgeNode> g{bridge("A|B", {{A, 1}, {B, 1}}),
                                  bridge("B|C#1", {{B, 1}, {C, 1}}),
                                  bridge("B|C#2", {{B, 1}, {C, 1}})};
  const auto t = RouteTable::compute(g, 0, 3);
  const auto* c = t.find(C);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->next, (std::vector<NextHop>{{B, 1}, {B, 2}}));
  EXPECT_EQ(c->hops, 2u);
  std::set<int> used;
  for (std::uint64_t key = 0; key < 64; ++key) {
    const NextHop* h = t.pick(C, key);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(*h, *t.pick(C, key)) << "a stream keeps its hop";
    used.insert(h->peer);
  }
  EXPECT_EQ(used, (std::set<int>{1, 2}));
  // A triangle A, B, C with bridges A|B, B|C, C|A: from A|B, C is as far over
  // site A as over site B.
  const std::vector<BridgeNode> tri{bridge("A|B", {{A, 1}, {B, 1}}),
                                    bridge("B|C", {{B, 1}, {C, 1}}),
                                    bridge("C|A", {{C, 1}, {A, 1}})};
  const auto u = RouteTable::compute(tri, 0, 3);
  EXPECT_EQ(u.find(C)->next, (std::vector<NextHop>{{B, 1}, {A, 2}}));
}

TEST(RouteTable, NoRouteIsRefusedWithOneLine) {
  std::vector<BridgeNode> g{bridge("A|B", {{A, 1}, {B, 1}}), bridge("B|C", {{B, 1}, {C, 1}}),
                            bridge("D|E", {{D, 1}, {4, 1}})};
  auto t = RouteTable::compute(g, 0, 6);
  EXPECT_EQ(t.find(D), nullptr);
  EXPECT_EQ(t.pick(D, 7), nullptr);
  EXPECT_EQ(t.no_route(D),
            "no route from bridge A|B to site 3: the 1 bridges up with a leg on it are not "
            "reachable from here");
  EXPECT_EQ(t.no_route(5),
            "no route from bridge A|B to site 5: no bridge in the configuration has a leg on it");
  EXPECT_EQ(t.no_route(9), "no route from bridge A|B to site 9: the deployment has 6 sites");
  EXPECT_EQ(t.find(9), nullptr);
  g[1].up = false;
  t = RouteTable::compute(g, 0, 6);
  EXPECT_EQ(t.find(C), nullptr);
  EXPECT_EQ(t.no_route(C),
            "no route from bridge A|B to site 2: all 1 bridges with a leg on it are down");
}

TEST(RouteTable, BadGraphsAreRefused) {
  const auto bad = [](std::vector<BridgeNode> g, int self, int sites) {
    try {
      RouteTable::compute(g, self, sites);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::vector<BridgeNode> ok{bridge("A|B", {{A, 1}, {B, 1}})};
  EXPECT_EQ(bad(ok, 0, 0), "route table: 0 sites; it takes 1..64");
  EXPECT_EQ(bad(ok, 0, 65), "route table: 65 sites; it takes 1..64");
  EXPECT_EQ(bad(ok, 1, 2), "route table: this bridge (1) is not in the graph of 1");
  EXPECT_EQ(bad({bridge("A|B", {{A, 1}, {B, 0}})}, 0, 2),
            "route table: bridge A|B's leg on site 1 costs 0 (costs are >= 1)");
  EXPECT_EQ(bad({bridge("A|A", {{A, 1}, {A, 1}})}, 0, 2),
            "route table: bridge A|A has two legs on site 0");
  EXPECT_EQ(bad({bridge("A|C", {{A, 1}, {C, 1}})}, 0, 2),
            "route table: bridge A|C has a leg on site 2, outside the 2 sites");
  auto down = ok;
  down[0].up = false;
  EXPECT_EQ(bad(down, 0, 2), "route table: this bridge A|B is down");
}

}  // namespace
