// Communicator arithmetic without MPI: rank maps (client/rank_map.h), groups
// (client/group.h), Cartesian grids (client/cart.h) and context ids
// (client/comm_table.h). Expected values are worked out by hand from MPI-3.1
// §6.3 and §7.5, not by the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "client/cart.h"
#include "client/comm_table.h"
#include "client/group.h"
#include "client/rank_map.h"

using namespace zipper::client;

namespace {

// Sites of 3 (world 0..2) and 5 (world 3..7) ranks, seen from site `local`.
SiteMap two_sites(int local) {
  std::string why;
  return *SiteMap::make({3, 5}, local, &why);
}
RankMap low_view(std::vector<int> world) { return RankMap(std::move(world), two_sites(0)); }
RankMap high_view(std::vector<int> world) { return RankMap(std::move(world), two_sites(1)); }

}  // namespace

TEST(RankMap, WorldIsBlockedWithOffsets) {
  std::vector<int> all(8);
  std::iota(all.begin(), all.end(), 0);
  const RankMap m = high_view(all);
  EXPECT_EQ(m.size(), 8);
  EXPECT_EQ(m.site_members(), (std::vector<int>{3, 5}));
  EXPECT_EQ(m.sites_spanned(), 2);
  EXPECT_TRUE(m.blocked());
  EXPECT_EQ(m.local_members(), (std::vector<int>{3, 4, 5, 6, 7}));
  EXPECT_EQ(m.remote_members(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(m.index_in_cluster(5), 2);
  EXPECT_EQ(m.index_in_cluster(1), 1);
  EXPECT_TRUE(m.is_local(3));
  EXPECT_FALSE(m.is_local(2));
}

TEST(RankMap, ReversedKeysPutTheHighClusterFirst) {
  const RankMap m = low_view({7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_TRUE(m.blocked());
  EXPECT_EQ(m.site_members(), (std::vector<int>{3, 5}));
  EXPECT_EQ(m.sites_spanned(), 2);
  EXPECT_EQ(m.local_members(), (std::vector<int>{5, 6, 7}));  // world 2, 1, 0
  EXPECT_EQ(m.remote_members(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(m.world(5), 2);
  EXPECT_EQ(m.rank_of_world(0), 7);
  EXPECT_EQ(m.index_in_cluster(7), 2);  // world 0 is the third low member in this order
}

TEST(RankMap, InterleavedIsNotBlockedAndMapsBothWays) {
  const RankMap m = high_view({0, 3, 1, 4, 2, 5, 6, 7});
  EXPECT_FALSE(m.blocked());
  EXPECT_EQ(m.local_members(), (std::vector<int>{1, 3, 5, 6, 7}));
  EXPECT_EQ(m.remote_members(), (std::vector<int>{0, 2, 4}));
  for (int r = 0; r < m.size(); ++r) {
    EXPECT_EQ(m.rank_of_world(m.world(r)), r);
    const auto& members = m.is_local(r) ? m.local_members() : m.remote_members();
    EXPECT_EQ(members[static_cast<std::size_t>(m.index_in_cluster(r))], r);
  }
}

TEST(RankMap, SubsetLeavesOthersOut) {
  const RankMap m = low_view({1, 6});
  EXPECT_EQ(m.size(), 2);
  EXPECT_EQ(m.site_members(), (std::vector<int>{1, 1}));
  EXPECT_EQ(m.rank_of_world(0), -1);
  EXPECT_EQ(m.rank_of_world(6), 1);
  EXPECT_EQ(m.rank_of_world(8), -1);
  EXPECT_EQ(m.rank_of_world(-1), -1);
  const RankMap one_cluster = low_view({2, 0});
  EXPECT_TRUE(one_cluster.remote_members().empty());
  EXPECT_EQ(one_cluster.local_members(), (std::vector<int>{0, 1}));
  EXPECT_EQ(one_cluster.site_members(), (std::vector<int>{2, 0}));
  EXPECT_EQ(one_cluster.sites_spanned(), 1);
}

// Three sites (world 0..1, 2..4, 5..8), seen from the middle one: "remote"
// is every other site, and each member's index counts within its own site.
TEST(RankMap, ThreeSitesCountMembersPerSite) {
  std::string why;
  const auto sites = SiteMap::make({2, 3, 4}, 1, &why);
  ASSERT_TRUE(sites) << why;
  const RankMap m({8, 0, 3, 5, 2, 1}, *sites);
  EXPECT_EQ(m.site_members(), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(m.sites_spanned(), 3);
  EXPECT_EQ(m.local_members(), (std::vector<int>{2, 4}));  // world 3, 2
  EXPECT_EQ(m.remote_members(), (std::vector<int>{0, 1, 3, 5}));
  EXPECT_EQ(m.index_in_cluster(0), 0);  // world 8: site 2's first member here
  EXPECT_EQ(m.index_in_cluster(3), 1);  // world 5: site 2's second
  EXPECT_EQ(m.index_in_cluster(1), 0);  // world 0: site 0's first
  EXPECT_EQ(m.index_in_cluster(5), 1);  // world 1: site 0's second
  EXPECT_EQ(m.index_in_cluster(4), 1);  // world 2: this site's second
  EXPECT_FALSE(m.blocked());
}

TEST(Group, InclExclAndRanges) {
  const Group g{{10, 11, 12, 13, 14, 15}};
  EXPECT_EQ(group_incl(g, {4, 0, 2})->world, (std::vector<int>{14, 10, 12}));
  EXPECT_EQ(group_excl(g, {4, 0, 2})->world, (std::vector<int>{11, 13, 15}));
  EXPECT_FALSE(group_incl(g, {1, 1}));  // named twice
  EXPECT_FALSE(group_incl(g, {6}));     // out of range
  EXPECT_FALSE(group_excl(g, {-1}));
  // (5, 1, -2) names 5, 3, 1; (0, 0, 1) names 0.
  EXPECT_EQ(group_range_incl(g, {{5, 1, -2}, {0, 0, 1}})->world,
            (std::vector<int>{15, 13, 11, 10}));
  EXPECT_EQ(group_range_excl(g, {{0, 4, 2}})->world, (std::vector<int>{11, 13, 15}));
  EXPECT_FALSE(group_range_incl(g, {{0, 4, 0}}));             // zero stride
  EXPECT_FALSE(group_range_incl(g, {{0, 6, 1}}));             // past the end
  EXPECT_FALSE(group_range_incl(g, {{0, 2, 1}, {2, 3, 1}}));  // rank 2 twice
}

TEST(Group, SetOperationsKeepMpiOrder) {
  const Group a{{5, 1, 7, 3}}, b{{3, 2, 5}};
  EXPECT_EQ(group_union(a, b).world, (std::vector<int>{5, 1, 7, 3, 2}));
  EXPECT_EQ(group_intersection(a, b).world, (std::vector<int>{5, 3}));
  EXPECT_EQ(group_difference(a, b).world, (std::vector<int>{1, 7}));
  EXPECT_TRUE(group_difference(a, a).world.empty());
}

TEST(Group, CompareAndTranslate) {
  const Group a{{1, 2, 3}}, b{{3, 1, 2}}, c{{1, 2, 4}};
  EXPECT_EQ(group_compare(a, a), GroupRelation::kIdent);
  EXPECT_EQ(group_compare(a, b), GroupRelation::kSimilar);
  EXPECT_EQ(group_compare(a, c), GroupRelation::kUnequal);
  EXPECT_EQ(group_compare(a, Group{{1, 2}}), GroupRelation::kUnequal);
  const int undef = -32766, proc_null = -2;
  const auto t = group_translate(a, {0, 2, proc_null, 1}, c, undef, proc_null);
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, (std::vector<int>{0, undef, proc_null, 1}));
  EXPECT_FALSE(group_translate(a, {3}, c, undef, proc_null));
  EXPECT_EQ(a.rank_of_world(3), 2);
  EXPECT_EQ(a.rank_of_world(9), -1);
}

TEST(Cart, DimsCreateBalancesAndKeepsFixedEntries) {
  std::vector<int> d{0, 0};
  ASSERT_TRUE(dims_create(6, d));
  EXPECT_EQ(d, (std::vector<int>{3, 2}));
  d = {0, 0, 0};
  ASSERT_TRUE(dims_create(8, d));
  EXPECT_EQ(d, (std::vector<int>{2, 2, 2}));
  d = {0, 3, 0};
  ASSERT_TRUE(dims_create(12, d));
  EXPECT_EQ(d, (std::vector<int>{2, 3, 2}));
  d = {0, 0};
  ASSERT_TRUE(dims_create(7, d));
  EXPECT_EQ(d, (std::vector<int>{7, 1}));
  d = {0, 5};
  EXPECT_FALSE(dims_create(12, d));  // 5 does not divide 12
  d = {4};
  EXPECT_FALSE(dims_create(8, d));  // all fixed, product differs
  d = {0};
  EXPECT_FALSE(dims_create(0, d));
  d = {-1, 0};
  EXPECT_FALSE(dims_create(4, d));
}

TEST(Cart, CoordsRankRoundTripRowMajor) {
  const Cart c{{2, 3, 4}, {false, true, false}};
  EXPECT_EQ(c.size(), 24);
  EXPECT_EQ(c.coords(0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(c.coords(23), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(c.coords(13), (std::vector<int>{1, 0, 1}));  // 13 = 1*12 + 0*4 + 1
  for (int r = 0; r < c.size(); ++r) EXPECT_EQ(c.rank(c.coords(r)), r);
  EXPECT_EQ(c.rank({1, -1, 3}), 1 * 12 + 2 * 4 + 3);  // periodic dimension wraps
  EXPECT_FALSE(c.rank({2, 0, 0}));                    // non-periodic out of range
  EXPECT_FALSE(c.rank({0, 0}));                       // wrong dimension count
}

TEST(Cart, ShiftHitsProcNullOnlyAtNonPeriodicEdges) {
  const Cart c{{3, 4}, {false, true}};
  const int pn = -2;
  // rank 4 = (1, 0)
  EXPECT_EQ(c.shift(4, 0, 1, pn), (std::pair<int, int>{0, 8}));
  EXPECT_EQ(c.shift(4, 1, 1, pn), (std::pair<int, int>{7, 5}));  // wraps to (1, 3)
  // rank 8 = (2, 0): moving down leaves the grid
  EXPECT_EQ(c.shift(8, 0, 1, pn), (std::pair<int, int>{4, pn}));
  EXPECT_EQ(c.shift(0, 0, -1, pn), (std::pair<int, int>{4, pn}));
  EXPECT_EQ(c.shift(0, 0, 3, pn), (std::pair<int, int>{pn, pn}));
}

TEST(Cart, SubGridsPartitionTheRanks) {
  const Cart c{{2, 3, 2}, {true, false, true}};
  const std::vector<bool> remain{false, true, false};
  const Cart s = c.sub(remain);
  EXPECT_EQ(s.dims, (std::vector<int>{3}));
  EXPECT_EQ(s.periods, (std::vector<bool>{false}));
  // Each colour is one (dim0, dim2) position; its key is dim1's coordinate.
  std::map<int, std::vector<int>> by_color;
  for (int r = 0; r < c.size(); ++r) {
    const auto [color, key] = c.sub_color_key(r, remain);
    const auto co = c.coords(r);
    EXPECT_EQ(color, co[0] * 2 + co[2]);
    EXPECT_EQ(key, co[1]);
    by_color[color].push_back(r);
  }
  EXPECT_EQ(by_color.size(), 4u);
  for (const auto& [color, ranks] : by_color) EXPECT_EQ(ranks.size(), 3u);
}

// Context ids (client/comm_table.h): blocking constructors and MMPI_Comm_idup
// draw from disjoint spaces, so a blocking agreement (one MAX round) never
// lands on an id an idup took while the agreement ran; taking never lowers.
TEST(ContextIds, BlockingAndIdupSpacesNeverMeet) {
  CommTable t;
  std::set<std::uint32_t> blocking, idup;
  std::mt19937 rng(29);
  for (int i = 0; i < 2000; ++i) {
    // Another member's proposal may lie above ours: the agreed id is the MAX.
    const std::uint32_t skew = rng() % 7;
    if (rng() % 2) {
      const std::uint32_t before = t.next_cid();
      const std::uint32_t cid = before + 2 * skew;
      ASSERT_EQ(cid % 2, 0u);
      t.take(cid);
      ASSERT_GT(t.next_cid(), cid);
      blocking.insert(cid);
    } else {
      const std::uint32_t before = t.next_idup_cid();
      const std::uint32_t cid = before + 2 * skew;
      ASSERT_EQ(cid % 2, 1u);
      t.take_idup(cid);
      ASSERT_GT(t.next_idup_cid(), cid);
      idup.insert(cid);
    }
  }
  for (std::uint32_t c : blocking) EXPECT_EQ(idup.count(c), 0u) << c;
  EXPECT_GE(*blocking.begin(), kFirstFreeCid);
  EXPECT_GE(*idup.begin(), kFirstFreeCid);
  // An idup's confirmation may take an id below the next one (its own
  // reservation): the next ids stay where they were.
  const std::uint32_t nb = t.next_cid(), ni = t.next_idup_cid();
  t.take(kFirstFreeCid);
  t.take_idup(kFirstFreeCid + 1);
  EXPECT_EQ(t.next_cid(), nb);
  EXPECT_EQ(t.next_idup_cid(), ni);
}
